package runner

import (
	"bytes"
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/agent/protocol"
	"github.com/heteroflow/heteroflow/receivers/fakesmi"
	"github.com/heteroflow/heteroflow/receivers/inventory"
	"github.com/heteroflow/heteroflow/receivers/smi"
	"github.com/heteroflow/heteroflow/receivers/vendorcatalog"
)

var numberingModels = map[string]string{
	"nvidia": "NVIDIA H100 80GB HBM3", "amd": "AMD Instinct MI210", "hygon": "K100_AI", "ascend": "910B3",
	"cambricon": "MLU370-X8", "kunlunxin": "P800 OAM", "mthreads": "MTT S4000", "biren": "BR104P",
	"iluvatar": "Iluvatar BI-V150", "metax": "MXC550", "enflame": "S60",
}

// TestDeviceNumberingPerVendor: a node (or container) that sees only some
// devices has its vendor CLI print ids that do not start at 0 — here 4 and
// 5. The inventory keeps the printed ids, and every visible-device variable
// names the devices by them (NVIDIA, which nvidia-smi always numbers from
// 0 in its own order, by UUID).
func TestDeviceNumberingPerVendor(t *testing.T) {
	t.Parallel()
	for _, e := range vendorcatalog.Catalog() {
		t.Run(e.ID, func(t *testing.T) {
			t.Parallel()
			model, ok := numberingModels[e.ID]
			require.True(t, ok, "no model for catalog vendor %s", e.ID)
			first := 4
			if e.ID == vendorcatalog.NVIDIA {
				first = 0
			}
			p := fakesmi.Profile{Vendor: e.ID, Model: model, Count: 2, MemoryMiB: 32768, FirstIndex: first}
			o := fakesmi.Options{Profile: &p, StatePath: filepath.Join(t.TempDir(), "s.json")}
			run := func(_ context.Context, name string, args ...string) ([]byte, error) {
				var buf bytes.Buffer
				err := fakesmi.Run(&buf, o, filepath.Base(name), args)
				return buf.Bytes(), err
			}
			snap, err := smi.Collect(context.Background(), e.ID, run)
			require.NoError(t, err)
			require.Len(t, snap.Devices, 2)
			var slices []protocol.DeviceSlice
			var want []string
			for i, d := range snap.Devices {
				require.Equal(t, first+i, d.Index, "the inventory index is the id %s prints", e.CLIs[0].Name)
				slices = append(slices, sliceOf(e.ID, d))
				if e.DeviceID == vendorcatalog.IDUUID {
					require.NotNil(t, d.UUID)
					want = append(want, *d.UUID)
				} else {
					want = append(want, strconv.Itoa(d.Index))
				}
			}
			if v := e.VisibleVar(false); v != "" {
				env, err := VisibilityEnv(slices, false)
				require.NoError(t, err)
				require.Equal(t, strings.Join(want, ","), env[v])
			}
			if v := e.VisibleVar(true); v != "" {
				env, err := VisibilityEnv(slices, true)
				require.NoError(t, err)
				require.Equal(t, strings.Join(want, ","), env[v])
			}
		})
	}
}

func sliceOf(vendor string, d inventory.Device) protocol.DeviceSlice {
	s := protocol.DeviceSlice{Vendor: vendor, Index: d.Index, Card: d.Card, Chip: d.Chip}
	if d.UUID != nil {
		s.UUID = *d.UUID
	}
	return s
}
