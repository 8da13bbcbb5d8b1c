// Package smibind connects the vendor receivers to receivers/smi's Collect.
//
// receivers/smi imports every vendor parser package and the receiver
// factories live in those same packages, so the factories cannot import smi
// (an import cycle). Importing this package — for its side effect, as
// `import _ ".../receivers/smibind"` in any collector build, which
// heteroflow's collector package does — binds smi.Collect once.
package smibind

import (
	"context"

	"github.com/heteroflow/heteroflow/receivers/internal/smireceiver"
	"github.com/heteroflow/heteroflow/receivers/inventory"
	"github.com/heteroflow/heteroflow/receivers/smi"
)

func init() {
	smireceiver.Bind(smireceiver.Binding{
		Collect: func(ctx context.Context, vendor string, run smireceiver.Runner) (*inventory.Snapshot, error) {
			return smi.Collect(ctx, vendor, smi.Runner(run))
		},
		Unavailable:  smi.Unavailable,
		ToolNotFound: smi.ErrToolNotFound,
		ToolNames: func(vendor string) []string {
			spec, err := smi.Lookup(vendor)
			if err != nil {
				return nil
			}
			return spec.ToolNames()
		},
	})
}
