package sim

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/receivers/inventory"
	"github.com/heteroflow/heteroflow/scheduler/model"
)

func heteroSample(t *testing.T, seed uint64) ([]model.Node, []model.Request) {
	t.Helper()
	nodes, err := LoadNodes(filepath.Join("..", "testdata", "openb-sample", "nodes.csv"))
	require.NoError(t, err)
	tasks, err := LoadTasks(filepath.Join("..", "testdata", "openb-sample", "pods.csv"))
	require.NoError(t, err)
	hn, ht, err := Heterogenize(nodes, tasks, seed)
	require.NoError(t, err)
	require.Len(t, hn, len(nodes))
	require.Len(t, ht, len(tasks))
	return hn, ht
}

func TestHeterogenizeFleetAndTasks(t *testing.T) {
	t.Parallel()
	nodes, tasks := heteroSample(t, 3)
	byModel := map[string]int{}
	gpuNodes := 0
	for _, n := range nodes {
		if len(n.Devices) > 0 {
			gpuNodes++
			byModel[n.Devices[0].Model]++
		}
		for _, d := range n.Devices {
			require.Equal(t, n.Devices[0].Model, d.Model, "one model per node")
			require.Positive(t, d.MemoryMiB)
		}
	}
	// Every class of the mix is present, in its share (rounded).
	for _, c := range HeteroFleet {
		require.InDelta(t, c.Share*float64(gpuNodes), byModel[c.Model], 1.01, c.Model)
	}
	// The slicing rules come from the vendor catalog.
	for _, n := range nodes {
		for _, d := range n.Devices {
			switch d.Model {
			case "A100-SXM4-80GB":
				require.Equal(t, "mig", d.Isolation.Hardware)
				require.Equal(t, "1g.10gb", d.Isolation.Profiles[0].Name)
			case "910B2":
				require.Equal(t, "vnpu", d.Isolation.Hardware)
				require.Empty(t, d.Isolation.DriverLimits, "Ascend has no Silver")
			case "BR104":
				require.False(t, d.Isolation.Sharing, "Biren: whole cards only")
			}
		}
	}
	qos := map[model.QoS]int{}
	pinned, vendorOnly := 0, 0
	for _, r := range tasks {
		if r.DeviceCount == 0 {
			require.Empty(t, r.Vendor)
			continue
		}
		qos[r.QoS]++
		if r.ComputeMilli < model.WholeMilli {
			require.Positive(t, r.MemoryMiB, "a fractional task asks device memory")
			require.Equal(t, int64(0), r.MemoryMiB%1024)
		} else {
			require.NotEqual(t, model.QoSBronze, r.QoS)
		}
		switch {
		case len(r.Models) == 1:
			pinned++
		case r.Vendor != "":
			vendorOnly++
		}
		if r.Vendor != "" {
			// A pin names something that can host the task.
			ok := false
			for _, i := range hostable(&r) {
				c := HeteroFleet[i]
				ok = ok || (c.Vendor == r.Vendor && (len(r.Models) == 0 || r.Models[0] == c.Model))
			}
			require.True(t, ok, "%s: %s %v %s %d milli", r.ID, r.Vendor, r.Models, r.QoS, r.ComputeMilli)
		}
	}
	require.Positive(t, qos[model.QoSGold])
	require.Positive(t, qos[model.QoSSilver])
	require.Positive(t, qos[model.QoSBronze])
	require.Positive(t, pinned)
	require.Positive(t, vendorOnly)
}

func TestHeterogenizeDeterministic(t *testing.T) {
	t.Parallel()
	a, at := heteroSample(t, 11)
	b, bt := heteroSample(t, 11)
	require.Equal(t, a, b)
	require.Equal(t, at, bt)
	_, ct := heteroSample(t, 12)
	require.NotEqual(t, at, ct)
}

// The replay reports each vendor's allocation: allocated compute of the
// vendor over its capacity, so the vendors' shares weighted by their
// devices add up to the cluster's.
func TestReplayByVendor(t *testing.T) {
	t.Parallel()
	nodes, tasks := heteroSample(t, 5)
	prof, err := LoadProfile("default")
	require.NoError(t, err)
	res, err := Run(context.Background(), Config{Nodes: nodes, Tasks: tasks, Profile: prof, Tune: 1.3, SlicingMetric: true}, 42)
	require.NoError(t, err)
	require.Contains(t, res.ByVendor, inventory.VendorAscend)
	require.Contains(t, res.ByVendor, inventory.VendorBiren)
	total := 0
	for _, v := range res.ByVendor {
		total += v.Devices
	}
	for b, alloc := range res.Alloc {
		sum, fr := 0.0, 0.0
		for _, v := range res.ByVendor {
			sum += v.Alloc[b] * float64(v.Devices)
			fr += v.Frag[b] * float64(v.Devices)
		}
		require.InDelta(t, alloc, sum/float64(total), 1e-6, "bucket %d", b)
		require.InDelta(t, res.Frag[b], fr/float64(total), 1e-6, "bucket %d", b)
	}
	// An NVIDIA-only fleet has no per-vendor series (the openb report
	// stays as it was).
	openb, err := LoadNodes(filepath.Join("..", "testdata", "openb-sample", "nodes.csv"))
	require.NoError(t, err)
	otasks, err := LoadTasks(filepath.Join("..", "testdata", "openb-sample", "pods.csv"))
	require.NoError(t, err)
	res, err = Run(context.Background(), Config{Nodes: openb, Tasks: otasks, Profile: prof}, 42)
	require.NoError(t, err)
	require.Nil(t, res.ByVendor)
}
