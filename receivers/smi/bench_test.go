package smi

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/heteroflow/heteroflow/receivers/fakesmi"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// BenchmarkCollect8Devices measures the parse (and merge) cost of one
// scrape of an 8-device node per vendor. The tool outputs are rendered once
// by fakesmi and replayed from memory, so process start-up of the real CLI
// is excluded: this is our cost, not the vendor's.
func BenchmarkCollect8Devices(b *testing.B) {
	models := map[string]string{
		"nvidia": "NVIDIA H100 80GB HBM3", "amd": "AMD Instinct MI300X", "hygon": "K100_AI", "ascend": "910B3",
		"cambricon": "MLU370-X8", "kunlunxin": "P800 OAM", "mthreads": "MTT S4000", "biren": "BR104P",
		"iluvatar": "Iluvatar BI-V150", "metax": "MXC550", "enflame": "S60",
	}
	for _, v := range inventory.Vendors {
		p := fakesmi.Profile{Vendor: v, Model: models[v], Count: 8, MemoryMiB: 65536}
		state := b.TempDir() + "/state.json"
		for i := 0; i < 8; i++ {
			if err := fakesmi.SetDevice(state, i, fakesmi.DeviceState{UtilizationPercent: float64(10 * i), MemoryUsedMiB: int64(1000 * i)}); err != nil {
				b.Fatal(err)
			}
		}
		o := fakesmi.Options{Profile: &p, StatePath: state}
		outputs := map[string][]byte{}
		spec, _ := Lookup(v)
		for _, c := range spec.Tools[0].Commands {
			var buf bytes.Buffer
			if err := fakesmi.Run(&buf, o, spec.Tools[0].Name, c.Args); err != nil {
				b.Fatal(err)
			}
			outputs[spec.Tools[0].Name+" "+strings.Join(c.Args, " ")] = buf.Bytes()
		}
		run := func(_ context.Context, name string, args ...string) ([]byte, error) {
			if out, ok := outputs[name+" "+strings.Join(args, " ")]; ok {
				return out, nil
			}
			return nil, fmt.Errorf("%w: %s", ErrToolNotFound, name)
		}
		b.Run(v, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				snap, err := Collect(context.Background(), v, run)
				if err != nil || len(snap.Devices) != 8 {
					b.Fatalf("collect: %v", err)
				}
			}
		})
	}
}
