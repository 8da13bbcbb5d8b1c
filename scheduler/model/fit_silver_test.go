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
	// Cambricon's memory split names one card: one-card Silver only.
	mlu := dev(inventory.VendorCambricon, "MLU370-X8", 23374)
	mlu.Isolation.DriverLimits = "env-limits"
	for _, count := range []int{1, 2} {
		r := req(t, QoSSilver, 8192, 25)
		r.DeviceCount = count
		_, ok := FitDevice(&mlu, &free, r, 1000)
		require.Equal(t, count == 1, ok, "cambricon split ×%d", count)
	}
}

// TestNodeKeepsCardAndChip: a multi-chip card's physical board and chip
// reach the scheduler's device (and from there the agent's slice), so the
// vendor CLI and device nodes name the right chip.
func TestNodeKeepsCardAndChip(t *testing.T) {
	t.Parallel()
	card, chip := 3, 1
	mem := int64(21527)
	n, err := NewNodeFromInventory("a310p", nil, 8000, 64000, "", inventory.VendorAscend,
		[]inventory.Device{{Index: 13, Model: "310P3", MemoryTotalMiB: &mem, Card: &card, Chip: &chip}})
	require.NoError(t, err)
	d := n.Devices[0]
	require.Equal(t, 13, d.Index, "the Chip Logic ID npu-smi prints")
	require.Equal(t, 3, *d.Card)
	require.Equal(t, 1, *d.Chip)
	require.Equal(t, "vnpu", d.Isolation.Hardware)
}

// TestSilverBestEffortOnlyWhenAllowed: a device without Silver enforcement
// takes a Silver request only when it asks for best effort, and never one
// that cannot share or is in MIG mode.
func TestSilverBestEffortOnlyWhenAllowed(t *testing.T) {
	t.Parallel()
	free := DeviceState{FreeMilli: WholeMilli}
	for _, tc := range []struct {
		name       string
		mech       string
		sharing    bool
		mig        bool
		bestEffort bool
		ok         bool
		isolation  string
	}{
		{"unenforced, not allowed", "", true, false, false, false, ""},
		{"unenforced, allowed", "", true, false, true, true, IsolationBestEffort},
		{"enforced stays enforced", "hami-core", true, false, true, true, "hami-core"},
		{"no sharing either", "", false, false, true, false, ""},
		{"MIG mode", "", true, true, true, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := dev(inventory.VendorNVIDIA, "NVIDIA H100 80GB HBM3", 81559)
			d.Isolation.DriverLimits, d.Isolation.Sharing, d.MIG = tc.mech, tc.sharing, tc.mig
			r := req(t, QoSSilver, 8192, 25)
			r.BestEffort = tc.bestEffort
			s, ok := FitDevice(&d, &free, r, 1000)
			require.Equal(t, tc.ok, ok)
			if ok {
				require.Equal(t, tc.isolation, s.Isolation)
			}
		})
	}
	r := req(t, QoSBronze, 8192, 25)
	r.BestEffort = true
	require.Error(t, r.Normalize(), "best effort is a Silver option")
}

// TestSilverWithoutAHostMechanism: Moore Threads' sGPU is enforced only by
// its Kubernetes toolkit, so the catalog gives its GPUs no Silver: a Silver
// task waits for another device, or runs best-effort (visibility only) when
// it allows that; Bronze time-sharing stays.
func TestSilverWithoutAHostMechanism(t *testing.T) {
	t.Parallel()
	free := DeviceState{FreeMilli: WholeMilli}
	mt := dev(inventory.VendorMThreads, "MTT S4000", 49152)
	require.Empty(t, mt.Isolation.DriverLimits)
	r := req(t, QoSSilver, 8192, 25)
	_, ok := FitDevice(&mt, &free, r, 1000)
	require.False(t, ok, "no Silver where nothing enforces it")
	r.BestEffort = true
	s, ok := FitDevice(&mt, &free, r, 1000)
	require.True(t, ok)
	require.Equal(t, IsolationBestEffort, s.Isolation)
	s, ok = FitDevice(&mt, &free, req(t, QoSBronze, 8192, 25), 1000)
	require.True(t, ok)
	require.Equal(t, "sharing", s.Isolation)
}
