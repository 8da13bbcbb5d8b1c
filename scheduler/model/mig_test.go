package model

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/receivers/fakesmi"
	"github.com/heteroflow/heteroflow/receivers/inventory"
	"github.com/heteroflow/heteroflow/receivers/smi"
)

// makeRunH100 is the `make run` H100 node's profile, read from the script
// so the test follows it: 8 H100s, GPU 0 in MIG mode with two 3g.40gb.
func makeRunH100(t *testing.T) fakesmi.Profile {
	t.Helper()
	b, err := os.ReadFile("../../deploy/dev-run.sh")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^node h100 '(\{.*\})'$`).FindSubmatch(b)
	require.NotNil(t, m, "deploy/dev-run.sh has no h100 node line")
	var p fakesmi.Profile
	require.NoError(t, json.Unmarshal(m[1], &p))
	require.NoError(t, p.Validate())
	return p
}

func collectFake(t *testing.T, p fakesmi.Profile, state string) *inventory.Snapshot {
	t.Helper()
	o := fakesmi.Options{Profile: &p, StatePath: state}
	run := func(_ context.Context, name string, args ...string) ([]byte, error) {
		var buf bytes.Buffer
		err := fakesmi.Run(&buf, o, name, args)
		return buf.Bytes(), err
	}
	snap, err := smi.Collect(context.Background(), p.Vendor, run)
	require.NoError(t, err)
	return snap
}

// TestMIGGPUUsedOnlyThroughInstances: on the `make run` H100 node, the GPU
// in MIG mode reports utilisation as absent (never 0) while busy, takes no
// Silver or Bronze slice and no whole-GPU Gold, and its two 3g.40gb
// instances fill it; the seven whole H100s take the shared work.
func TestMIGGPUUsedOnlyThroughInstances(t *testing.T) {
	t.Parallel()
	p := makeRunH100(t)
	state := filepath.Join(t.TempDir(), "state.json")
	require.NoError(t, fakesmi.SetDevice(state, 0, fakesmi.DeviceState{UtilizationPercent: 60, MemoryUsedMiB: 30000}))
	require.NoError(t, fakesmi.SetDevice(state, 1, fakesmi.DeviceState{UtilizationPercent: 40, MemoryUsedMiB: 1000}))
	snap := collectFake(t, p, state)
	d0, d1 := snap.Devices[0], snap.Devices[1]
	require.True(t, d0.MIGMode)
	require.Nil(t, d0.UtilizationPercent, "nvidia-smi prints N/A under MIG: unknown, not 0")
	require.Len(t, d0.Partitions, 2)
	for _, part := range d0.Partitions {
		require.InDelta(t, 40779, *part.MemoryTotalMiB, 1, "per-instance memory from the CLI")
		require.NotNil(t, part.MemoryUsedMiB)
	}
	require.False(t, d1.MIGMode)
	require.InDelta(t, 40, *d1.UtilizationPercent, 0.5)

	n, err := NewNodeFromInventory("h100", nil, 64000, 512000, "", snap.Vendor, snap.Devices)
	require.NoError(t, err)
	require.True(t, n.Devices[0].MIG)
	require.Equal(t, uint16(0xff), n.Devices[0].MIGReserved, "3g.40gb at 0:4 and 4:4")
	for i := 1; i < 8; i++ {
		require.False(t, n.Devices[i].MIG)
	}
	free := DeviceState{FreeMilli: WholeMilli}
	for _, r := range []*Request{req(t, QoSSilver, 8192, 25), req(t, QoSBronze, 1024, 10), req(t, QoSBronze, 0, 0)} {
		_, ok := FitDevice(&n.Devices[0], &free, r, 1000)
		require.False(t, ok, "%s must not share the MIG GPU", r.QoS)
		s, ok := FitDevice(&n.Devices[1], &free, r, 1000)
		require.True(t, ok)
		require.NotEqual(t, "mig", s.Isolation)
	}
	for _, r := range []*Request{req(t, QoSGold, 8192, 10), req(t, QoSGold, 0, 100), req(t, QoSGold, 81559, 100)} {
		_, ok := FitDevice(&n.Devices[0], &free, r, 1000)
		require.False(t, ok, "both instances hold the MIG GPU: gold %d MiB %d‰", r.MemoryMiB, r.ComputeMilli)
	}
}

// TestMIGGPUFreeSlots: with one 3g.40gb instance at 0:4 the MIG GPU still
// takes a Gold 1g.10gb at slot 4, a whole-GPU ask only as the 7g instance
// (which no longer fits), and the instance a fresh MIG GPU gives a
// whole-GPU ask is the 7g one.
func TestMIGGPUFreeSlots(t *testing.T) {
	t.Parallel()
	p := makeRunH100(t)
	p.Partitions = p.Partitions[:1]
	snap := collectFake(t, p, filepath.Join(t.TempDir(), "state.json"))
	n, err := NewNodeFromInventory("h100", nil, 64000, 512000, "", snap.Vendor, snap.Devices)
	require.NoError(t, err)
	d0 := &n.Devices[0]
	require.Equal(t, uint16(0x0f), d0.MIGReserved)
	free := DeviceState{FreeMilli: WholeMilli}
	s, ok := FitDevice(d0, &free, req(t, QoSGold, 8192, 10), 1000)
	require.True(t, ok)
	require.Equal(t, "1g.10gb", s.Profile)
	require.Equal(t, 4, s.Start)
	_, ok = FitDevice(d0, &free, req(t, QoSGold, 0, 100), 1000)
	require.False(t, ok)

	empty := *d0
	empty.MIGReserved = 0
	s, ok = FitDevice(&empty, &free, req(t, QoSGold, 0, 100), 1000)
	require.True(t, ok)
	require.Equal(t, "7g.80gb", s.Profile)
}
