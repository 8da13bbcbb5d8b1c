package model

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/receivers/inventory"
)

func dev(vendor, model string, memMiB int64) Device {
	return Device{Vendor: vendor, Model: model, MemoryMiB: memMiB, NUMA: -1, Isolation: inventory.IsolationFor(vendor, model)}
}

func req(t *testing.T, qos QoS, mem int64, pct float64) *Request {
	t.Helper()
	r := &Request{ID: "t", DeviceCount: 1, MemoryMiB: mem, ComputePercent: pct, QoS: qos}
	require.NoError(t, r.Normalize())
	return r
}

func TestFitDevice(t *testing.T) {
	t.Parallel()
	a100 := dev(inventory.VendorNVIDIA, "A100-SXM4-40GB", 40960)
	npu := dev(inventory.VendorAscend, "910B3", 65536)
	t4 := dev(inventory.VendorNVIDIA, "T4", 16384)
	tests := []struct {
		name    string
		d       Device
		st      DeviceState
		r       *Request
		ok      bool
		profile string
		start   int
		milli   int32
	}{
		// 8 GiB, 10%: smallest MIG profile with ≥ 8192 MiB is 1g.10gb (10240),
		// 1/7 compute = 142 milli ≥ 100; first free start slot 0.
		{"gold mig smallest fitting", a100, DeviceState{FreeMilli: 1000}, req(t, QoSGold, 8192, 10), true, "1g.10gb", 0, 142},
		// Slots 0–1 taken (mask 0b11): 1g.10gb starts at 0,2,4,6 → 2.
		{"gold mig next slot", a100, DeviceState{FreeMilli: 858, Mode: ModePartitioned, Slices: 1, PartMask: 0b11, PartSlices: 1, PartMem: 10240},
			req(t, QoSGold, 8192, 10), true, "1g.10gb", 2, 142},
		// 3g.20gb starts at 0 or 4: slots 0 and 4 both occupied → next bigger
		// (4g.20gb, start 0) also blocked → no fit.
		{"gold mig placement rule", a100, DeviceState{FreeMilli: 716, Mode: ModePartitioned, Slices: 2, PartMask: 0b00010001, PartSlices: 2, PartMem: 10240},
			req(t, QoSGold, 16384, 30), false, "", 0, 0},
		// Gold never joins a shared device.
		{"gold refuses shared device", a100, DeviceState{FreeMilli: 900, Mode: ModeShared, Slices: 1, MemUsed: 1024}, req(t, QoSGold, 1024, 10), false, "", 0, 0},
		// No MIG on T4: gold takes the whole device.
		{"gold whole device", t4, DeviceState{FreeMilli: 1000}, req(t, QoSGold, 1024, 10), true, "", -1, 1000},
		// vNPU: 20 GiB → vir10_3c_32g (32768 MiB, 10/20 cores = 500 milli).
		{"gold vnpu template", npu, DeviceState{FreeMilli: 1000}, req(t, QoSGold, 20480, 20), true, "vir10_3c_32g", -1, 500},
		// Silver on Ascend: no driver-level limits, never offered.
		{"silver not on ascend", npu, DeviceState{FreeMilli: 1000}, req(t, QoSSilver, 1024, 10), false, "", 0, 0},
		// Silver: 16384 − 10000 used = 6384 free < 8192 → no.
		{"silver memory full", t4, DeviceState{FreeMilli: 900, Mode: ModeShared, Slices: 1, MemUsed: 10000}, req(t, QoSSilver, 8192, 10), false, "", 0, 0},
		// Silver: compute 900 free ≥ 500 and memory 6384 ≥ 4096 → yes.
		{"silver fits", t4, DeviceState{FreeMilli: 900, Mode: ModeShared, Slices: 1, MemUsed: 10000}, req(t, QoSSilver, 4096, 50), true, "", -1, 500},
		// Silver refuses a device a gold task owns.
		{"silver refuses exclusive", t4, DeviceState{FreeMilli: 0, Mode: ModeExclusive, Slices: 1}, req(t, QoSSilver, 0, 0), false, "", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, ok := FitDevice(&tt.d, &tt.st, tt.r, 1000)
			require.Equal(t, tt.ok, ok)
			if !ok {
				return
			}
			require.Equal(t, tt.profile, s.Profile)
			require.Equal(t, tt.start, s.Start)
			require.Equal(t, tt.milli, s.ComputeMilli)
		})
	}
}

func TestBronzeOvercommit(t *testing.T) {
	t.Parallel()
	d := dev(inventory.VendorNVIDIA, "T4", 16384)
	r := req(t, QoSBronze, 12288, 10)
	// Ratio 1.5: 12288 MiB counts ceil(12288/1.5) = 8192 accounted MiB; two
	// fit (16384), a third does not.
	st := DeviceState{FreeMilli: 1000}
	for i := 0; i < 2; i++ {
		s, ok := FitDevice(&d, &st, r, 1500)
		require.True(t, ok, "slice %d", i)
		st.apply(&s, 1500)
	}
	require.Equal(t, int64(16384), st.MemUsed)
	_, ok := FitDevice(&d, &st, r, 1500)
	require.False(t, ok)
	// Without overcommit only one 12288 MiB slice fits.
	st = DeviceState{FreeMilli: 1000}
	s, ok := FitDevice(&d, &st, r, 1000)
	require.True(t, ok)
	st.apply(&s, 1000)
	_, ok = FitDevice(&d, &st, r, 1000)
	require.False(t, ok)
}
