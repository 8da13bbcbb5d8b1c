package model

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// TestSilverOnlyWhereEnforced: Silver fits a device only when its node
// reported a mechanism that enforces it; MPS (one daemon per GPU) takes
// one-GPU requests only.
func TestSilverOnlyWhereEnforced(t *testing.T) {
	t.Parallel()
	free := DeviceState{FreeMilli: WholeMilli}
	h := dev(inventory.VendorNVIDIA, "NVIDIA H100 80GB HBM3", 81559)
	for _, tc := range []struct {
		mech  string
		count int
		ok    bool
	}{{"mps", 1, true}, {"mps", 2, false}, {"hami-core", 2, true}, {"", 1, false}} {
		d := h
		d.Isolation.DriverLimits = tc.mech
		r := req(t, QoSSilver, 8192, 25)
		r.DeviceCount = tc.count
		s, ok := FitDevice(&d, &free, r, 1000)
		require.Equal(t, tc.ok, ok, "%s ×%d", tc.mech, tc.count)
		if ok {
			require.Equal(t, tc.mech, s.Isolation)
		}
	}
}
