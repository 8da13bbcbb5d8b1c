package plugins

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/receivers/inventory"
	"github.com/heteroflow/heteroflow/scheduler/framework"
	"github.com/heteroflow/heteroflow/scheduler/model"
)

// vendorQuota refuses totals above total devices and any vendor in blocked.
type vendorQuota struct {
	total   int
	blocked map[string]bool
}

func (v vendorQuota) Fits(r *model.Request, vendor string) (bool, string) {
	if vendor == "" {
		return r.DeviceCount <= v.total, "tenant t: devices"
	}
	return !v.blocked[vendor], "tenant t: vendor " + vendor
}

func TestQuota(t *testing.T) {
	t.Parallel()
	amd := model.Node{Name: "amd", CPUMilli: 8000, MemoryMiB: 1 << 20, Devices: []model.Device{{Vendor: inventory.VendorAMD,
		Model: "MI210", MemoryMiB: 65536, NUMA: -1, Isolation: inventory.IsolationFor(inventory.VendorAMD, "MI210")}}}
	tests := []struct {
		name     string
		q        vendorQuota
		count    int
		code     framework.Code
		excluded []string
	}{
		{"within quota", vendorQuota{total: 4}, 1, framework.Success, nil},
		{"over total", vendorQuota{total: 1}, 2, framework.UnschedulableAndUnresolvable, nil},
		// NVIDIA exhausted: its models leave the request, AMD stays.
		{"vendor narrowed", vendorQuota{total: 4, blocked: map[string]bool{inventory.VendorNVIDIA: true}}, 1, framework.Success, []string{"T4"}},
		{"every vendor exhausted", vendorQuota{total: 4, blocked: map[string]bool{inventory.VendorNVIDIA: true, inventory.VendorAMD: true}},
			1, framework.UnschedulableAndUnresolvable, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cl := newCluster(t, gpuNode("nv", 8000, "T4", 2), amd)
			pl, err := NewQuota(framework.Args{}, nil)
			require.NoError(t, err)
			q := pl.(*Quota)
			q.SetChecker(tt.q)
			c := cycle(t, cl, &model.Request{ID: "r", DeviceCount: tt.count, ComputePercent: 50})
			key := c.Req.ShapeKey()
			st := q.PreFilter(context.Background(), c)
			require.Equal(t, tt.code, st.Code)
			if st.Code != framework.Success {
				require.NotEmpty(t, q.LastReason())
				return
			}
			require.Equal(t, tt.excluded, c.Req.ExcludeModels)
			if tt.excluded != nil {
				require.NotEqual(t, key, c.Req.ShapeKey(), "narrowing must change the memo key")
			}
		})
	}
}
