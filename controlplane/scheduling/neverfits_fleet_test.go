package scheduling

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// countingStore counts node list calls.
type countingStore struct {
	Store
	lists atomic.Int64
}

func (c *countingStore) ListNodes(ctx context.Context, f controlplane.NodeFilter) ([]*controlplane.Node, int, error) {
	c.lists.Add(1)
	return c.Store.ListNodes(ctx, f)
}

// TestAdmitTaskFleetCache: the submit-time check reads the fleet once per
// NodeSync however many tasks are submitted, keeps one entry per distinct
// inventory, and confirms a refusal on a fresh read, so a node that joined
// a moment ago admits the task that needs it.
func TestAdmitTaskFleetCache(t *testing.T) {
	h := newHarness(t, Config{})
	cs := &countingStore{Store: h.db}
	svc := h.serviceOn(cs)
	for i := range 20 {
		h.addNode(fmt.Sprintf("n%02d", i), inventory.VendorNVIDIA, "NVIDIA H100 80GB HBM3", 8, 81559)
	}
	spec := controlplane.TaskSpec{DeviceCount: 1, ComputePercent: 50}
	for range 100 {
		require.NoError(t, svc.AdmitTask(h.ctx, spec))
	}
	require.Equal(t, int64(1), cs.lists.Load(), "one read serves every submission within NodeSync")
	nodes, err := svc.fleetNodes(h.ctx, false)
	require.NoError(t, err)
	require.Len(t, nodes, 1, "twenty identical nodes are one shape")

	// A vendor the cached fleet lacks: refused only after a fresh read.
	ascend := controlplane.TaskSpec{DeviceCount: 1, ComputePercent: 100, Vendor: inventory.VendorAscend}
	var nf *NeverFitsError
	require.ErrorAs(t, svc.AdmitTask(h.ctx, ascend), &nf)
	require.Contains(t, nf.Why, "no node in the cluster has ascend devices")
	require.Equal(t, int64(2), cs.lists.Load())
	h.addNode("npu", inventory.VendorAscend, "910B3", 8, 65536)
	require.NoError(t, svc.AdmitTask(h.ctx, ascend), "the node that just joined holds it")
	require.Equal(t, int64(3), cs.lists.Load())

	// Past NodeSync a submission is answered from the view it has while
	// one background read replaces it.
	h.clk.Add(2 * time.Second)
	require.NoError(t, svc.AdmitTask(h.ctx, spec))
	require.Eventually(t, func() bool { return cs.lists.Load() == 4 }, 10*time.Second, 5*time.Millisecond)
	for range 10 {
		require.NoError(t, svc.AdmitTask(h.ctx, spec))
	}
	nodes, err = svc.fleetNodes(h.ctx, false)
	require.NoError(t, err)
	require.Len(t, nodes, 2)
	require.Eventually(t, func() bool {
		svc.fleet.mu.Lock()
		defer svc.fleet.mu.Unlock()
		return !svc.fleet.refreshing
	}, 10*time.Second, 5*time.Millisecond)
	require.Equal(t, int64(4), cs.lists.Load(), "one background read, not one per submission")
}

// TestLeaderSyncFeedsFleetView: on the leader, the node sync installs the
// never-fits view from the nodes it has just read, so submissions between
// syncs read no node at all (before, the check read and decoded the whole
// fleet once more every NodeSync), and a node the sync saw join admits its
// task without a read.
func TestLeaderSyncFeedsFleetView(t *testing.T) {
	h := newHarness(t, Config{})
	cs := &countingStore{Store: h.db}
	svc := h.serviceOn(cs)
	for i := range 5 {
		h.addNode(fmt.Sprintf("n%02d", i), inventory.VendorNVIDIA, "NVIDIA H100 80GB HBM3", 8, 81559)
	}
	require.NoError(t, svc.Tick(h.ctx, true))
	reads := cs.lists.Load()
	spec := controlplane.TaskSpec{DeviceCount: 1, ComputePercent: 50}
	for range 3 {
		h.clk.Add(time.Second)
		require.NoError(t, svc.Tick(h.ctx, true))
		for range 20 {
			require.NoError(t, svc.AdmitTask(h.ctx, spec))
		}
	}
	require.Equal(t, reads+3, cs.lists.Load(), "one node read per sync, none for the submissions")
	nodes, err := svc.fleetNodes(h.ctx, false)
	require.NoError(t, err)
	require.Len(t, nodes, 1)

	h.addNode("npu", inventory.VendorAscend, "910B3", 8, 65536)
	h.clk.Add(time.Second)
	require.NoError(t, svc.Tick(h.ctx, true))
	reads = cs.lists.Load()
	require.NoError(t, svc.AdmitTask(h.ctx, controlplane.TaskSpec{DeviceCount: 1, ComputePercent: 100, Vendor: inventory.VendorAscend}))
	require.Equal(t, reads, cs.lists.Load(), "the sync already saw the new node")

	// A slow sync (a 5,000-node read under load) leaves the view a few
	// NodeSyncs old: submissions still start no read of their own.
	h.clk.Add(3 * time.Second)
	require.NoError(t, svc.AdmitTask(h.ctx, spec))
	time.Sleep(50 * time.Millisecond)
	require.Equal(t, reads, cs.lists.Load(), "the leader's sync feeds the view")
	// Without the lease no sync feeds it: a stale view is read again.
	svc.stepDown()
	require.NoError(t, svc.AdmitTask(h.ctx, spec))
	require.Eventually(t, func() bool { return cs.lists.Load() == reads+1 }, 10*time.Second, 5*time.Millisecond)
}

// TestBackgroundNodeRead: the running loop's node read happens off the
// loop; a finished read is handed over once, and a start while one is in
// flight starts no second read.
func TestBackgroundNodeRead(t *testing.T) {
	h := newHarness(t, Config{})
	cs := &countingStore{Store: h.db}
	svc := h.serviceOn(cs)
	h.addNode("n1", inventory.VendorNVIDIA, "NVIDIA H100 80GB HBM3", 8, 81559)
	require.NoError(t, svc.Tick(h.ctx, false))
	require.Nil(t, svc.nodeReads.take(), "nothing read yet")

	h.addNode("n2", inventory.VendorNVIDIA, "NVIDIA H100 80GB HBM3", 8, 81559)
	before := cs.lists.Load()
	svc.nodeReads.start(h.ctx, svc)
	svc.nodeReads.start(h.ctx, svc) // in flight (or done): no second read while busy
	var read *nodeRead
	require.Eventually(t, func() bool { read = svc.nodeReads.take(); return read != nil }, 10*time.Second, 5*time.Millisecond)
	require.LessOrEqual(t, cs.lists.Load()-before, int64(2))
	require.Len(t, read.nodes, 2)
	require.Nil(t, svc.nodeReads.take(), "handed over once")
	require.NoError(t, svc.tick(h.ctx, read))
	svc.mu.Lock()
	_, seen := svc.snap.nodes["n2"]
	svc.mu.Unlock()
	require.True(t, seen, "the tick applied the read")
}

// TestNodeSyncSkipsUnchangedNodes: a sync over unchanged nodes keeps their
// model nodes (the store hands out the same decoded inventory), and a
// node whose devices changed is still seen and rebuilt.
func TestNodeSyncSkipsUnchangedNodes(t *testing.T) {
	h := newHarness(t, Config{})
	svc := h.svc
	h.addNode("n1", inventory.VendorNVIDIA, "NVIDIA H100 80GB HBM3", 8, 81559)
	h.addNode("n2", inventory.VendorNVIDIA, "NVIDIA H100 80GB HBM3", 8, 81559)
	require.NoError(t, svc.Tick(h.ctx, true))
	svc.mu.Lock()
	before := svc.snap.nodes["n1"].node
	svc.mu.Unlock()

	h.nodes["n1"].heartbeat()
	h.clk.Add(time.Second)
	require.NoError(t, svc.Tick(h.ctx, true))
	svc.mu.Lock()
	after := svc.snap.nodes["n1"].node
	svc.mu.Unlock()
	require.NotSame(t, before, after, "a new read of the node")
	require.True(t, sameDescription(before, after), "unchanged node: the read shares its decoded inventory, so no model rebuild")

	m := int64(65536)
	inv := []inventory.Snapshot{{Vendor: inventory.VendorAscend, Devices: []inventory.Device{
		{Index: 0, Model: "910B3", MemoryTotalMiB: &m}, {Index: 1, Model: "910B3", MemoryTotalMiB: &m}}}}
	_, err := h.db.RecordHeartbeat(h.ctx, "n1", controlplane.NodeHeartbeat{At: h.clk.Now(), Health: "ok", CPUCount: 64,
		MemoryTotalMiB: 512000, Inventory: inv})
	require.NoError(t, err)
	h.clk.Add(time.Second)
	require.NoError(t, svc.Tick(h.ctx, true))
	svc.mu.Lock()
	defer svc.mu.Unlock()
	n1 := svc.snap.cl.Nodes[svc.snap.nodes["n1"].index].Node
	require.Len(t, n1.Devices, 2, "the changed node is rebuilt with its new devices")
	require.Equal(t, "910B3", n1.Devices[0].Model)
}

// TestFirstSubmissionsShareOneFleetRead: submissions arriving together
// before any view exists share one read (they each read the whole fleet,
// one after another, before), and a leader starts with the view of the
// nodes its take-over read.
func TestFirstSubmissionsShareOneFleetRead(t *testing.T) {
	h := newHarness(t, Config{})
	for i := range 5 {
		h.addNode(fmt.Sprintf("n%02d", i), inventory.VendorNVIDIA, "NVIDIA H100 80GB HBM3", 8, 81559)
	}
	cs := &countingStore{Store: h.db}
	svc := h.serviceOn(cs)
	spec := controlplane.TaskSpec{DeviceCount: 1, ComputePercent: 50}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			assert.NoError(t, svc.AdmitTask(h.ctx, spec))
		}()
	}
	close(start)
	wg.Wait()
	require.LessOrEqual(t, cs.lists.Load(), int64(2), "16 first submissions, at most two reads")

	leader, err := New(Options{Store: cs, Logger: slog.New(slog.DiscardHandler), Registry: prometheus.NewRegistry(), Now: h.clk.Now, Holder: "test2"})
	require.NoError(t, err)
	require.NoError(t, leader.Tick(h.ctx, false)) // takes over: reads the cluster
	reads := cs.lists.Load()
	require.NoError(t, leader.AdmitTask(h.ctx, spec))
	require.Equal(t, reads, cs.lists.Load(), "the take-over read serves the first submission")
}

// TestNodeJoinEndsBackoff: a task that found no room backs off; a node
// joining is capacity coming, so the next sync tries it again at once
// rather than after its backoff.
func TestNodeJoinEndsBackoff(t *testing.T) {
	h := newHarness(t, Config{BackoffBase: time.Minute, BackoffMax: time.Hour})
	h.addNode("n1", inventory.VendorNVIDIA, "NVIDIA H100 80GB HBM3", 1, 81559)
	require.NoError(t, h.svc.Tick(h.ctx, true))
	big := h.submit(controlplane.TaskSpec{Name: "big", DeviceCount: 2, ComputePercent: 100, QoS: controlplane.QoSBronze})
	require.NoError(t, h.svc.Tick(h.ctx, true))
	require.NoError(t, h.svc.Tick(h.ctx, true))
	require.Equal(t, controlplane.TaskQueued, h.task(big.ID).State, "no node has two devices yet")

	h.addNode("n2", inventory.VendorNVIDIA, "NVIDIA H100 80GB HBM3", 2, 81559)
	h.clk.Add(time.Second) // well inside the one-minute backoff
	require.NoError(t, h.svc.Tick(h.ctx, true))
	require.Equal(t, controlplane.TaskScheduled, h.task(big.ID).State, "placed on the node that joined")
}
