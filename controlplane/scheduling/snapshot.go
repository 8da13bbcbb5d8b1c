package scheduling

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/receivers/inventory"
	"github.com/heteroflow/heteroflow/receivers/rdma"
	"github.com/heteroflow/heteroflow/scheduler/model"
	"github.com/heteroflow/heteroflow/scheduler/plugins"
)

type readiness uint8

const (
	nodeReadyState readiness = iota
	nodeOffline
	nodeCordoned
)

// nodeEntry is what the snapshot knows of a stored node.
type nodeEntry struct {
	node  *controlplane.Node
	index int    // position in the cluster
	shape string // device signature: a change rebuilds the cluster
	state readiness
}

// placed is a placement in the cluster with the task facts the loop needs.
type placed struct {
	key      controlplane.AllocationKey
	node     string
	priority int
	qos      model.QoS
	tenant   string
	project  string
	vendor   []string // per slice
	slices   []model.Slice
	draining bool
	since    time.Time // when draining began
	running  bool      // started by its agent (kept by reconcile)
	gang     bool
}

// snapshot is the scheduler's cluster built from stored nodes and the
// ledger, then kept incrementally: binds and releases change it in place;
// only a node whose devices changed forces a rebuild.
type snapshot struct {
	cl    *model.Cluster
	nodes map[string]*nodeEntry
	byIdx []*nodeEntry
	// grew: a sync added a node or made one ready since the loop last
	// looked (syncLocked), so waiting tasks may fit now.
	grew   bool
	placed map[int64]*placed // by task id
	ratio  float64
	pools  *poolTable // tenants' dedicated node pools (pools.go); nil = none
}

func newSnapshot(ratio float64) (*snapshot, error) {
	cl, err := model.NewCluster(ratio)
	if err != nil {
		return nil, err
	}
	return &snapshot{cl: cl, nodes: map[string]*nodeEntry{}, placed: map[int64]*placed{}, ratio: ratio}, nil
}

func (s *snapshot) readiness(idx int) readiness {
	if idx < len(s.byIdx) {
		return s.byIdx[idx].state
	}
	return nodeOffline
}

func stateOf(n *controlplane.Node) readiness {
	switch {
	case n.State != controlplane.NodeOnline:
		return nodeOffline
	case n.Cordoned || n.Draining:
		return nodeCordoned
	}
	return nodeReadyState
}

// modelNode converts a stored node (all its vendors' inventories) into the
// scheduler's node, named by id. LoadAware's host label is the node id too:
// the agent's collector stamps host_name with the node id (not the machine's
// hostname, which several enrolled nodes may share), so that is the value the
// node's device series carry.
func modelNode(n *controlplane.Node) (model.Node, string, error) {
	labels := map[string]string{plugins.HostLabel: n.ID}
	for k, v := range n.Labels {
		labels[k] = v
	}
	out := model.Node{Name: n.ID, Labels: labels, CPUMilli: int64(n.CPUCount) * 1000, MemoryMiB: n.MemoryTotalMiB}
	var sig []string
	for _, snap := range n.Inventory {
		part, err := model.NewNodeFromInventory(n.ID, nil, 0, 0, "", snap.Vendor, snap.Devices)
		if err != nil {
			return model.Node{}, "", err
		}
		// Each device's path to the closest RDMA adapter (Topology prefers
		// devices near the fabric for RDMA tasks).
		model.AttachRDMA(part.Devices, snap.RDMA)
		for _, d := range part.Devices {
			sig = append(sig, fmt.Sprintf("%s/%s/%d/%d/%s", d.Vendor, d.Model, d.Index, d.MemoryMiB, d.RDMALink))
		}
		out.Devices = append(out.Devices, part.Devices...)
	}
	// RDMA: the adapters the agent detected (an active InfiniBand or RoCE
	// port); an "rdma" label overrides them.
	for _, snap := range n.Inventory {
		if k := rdma.Kind(snap.RDMA); k != "" && (out.RDMA == "" || k == inventory.RDMAInfiniBand) {
			out.RDMA = k
		}
	}
	if v := n.Labels["rdma"]; v != "" {
		out.RDMA = v
	}
	shape := fmt.Sprintf("%d/%d/%s/%s", out.CPUMilli, out.MemoryMiB, out.RDMA, strings.Join(sig, ","))
	return out, shape, out.Validate()
}

// syncNodes adds new nodes and updates readiness; it reports whether a
// node's devices changed (the caller rebuilds).
func (s *snapshot) syncNodes(nodes []*controlplane.Node) (rebuild bool, err error) {
	for _, n := range nodes {
		if e, ok := s.nodes[n.ID]; ok && sameDescription(e.node, n) {
			e.node = n
			if st := stateOf(n); st != e.state {
				e.state = st
				s.cl.Nodes[e.index].Version++
				s.grew = s.grew || st == nodeReadyState
			}
			continue
		}
		mn, shape, err := modelNode(n)
		if err != nil {
			return false, fmt.Errorf("node %s: %w", n.ID, err)
		}
		e, ok := s.nodes[n.ID]
		if ok && e.shape != shape {
			return true, nil
		}
		if !ok {
			ni, err := s.cl.AddNode(mn)
			if err != nil {
				return false, err
			}
			e = &nodeEntry{index: ni.Index, shape: shape, state: stateOf(n)}
			s.nodes[n.ID] = e
			s.byIdx = append(s.byIdx, e)
			s.grew = true
		}
		e.node = n
		if st := stateOf(n); st != e.state {
			e.state = st
			s.cl.Nodes[e.index].Version++ // readiness is a node fact: memo entries go stale
			s.grew = s.grew || st == nodeReadyState
		}
	}
	return false, nil
}

// sameDescription: b describes the same node as a, so its model node and
// shape need not be built again (at 5,000 nodes, every second). The
// store hands out an unchanged inventory as the same decoded value, so the
// inventory compares by identity; any other source builds the model node.
func sameDescription(a, b *controlplane.Node) bool {
	if a == nil || a.CPUCount != b.CPUCount || a.MemoryTotalMiB != b.MemoryTotalMiB ||
		len(a.Inventory) != len(b.Inventory) || !maps.Equal(a.Labels, b.Labels) {
		return false
	}
	return len(a.Inventory) == 0 || &a.Inventory[0] == &b.Inventory[0]
}

// placementOf rebuilds a model placement from ledger rows.
func (s *snapshot) placementOf(rows []*controlplane.Allocation) (model.Placement, *placed, error) {
	a0 := rows[0]
	ni, err := s.cl.Node(a0.NodeID)
	if err != nil {
		return model.Placement{}, nil, err
	}
	p := model.Placement{TaskID: strconv.FormatInt(a0.TaskID, 10), Node: a0.NodeID}
	meta := &placed{key: controlplane.AllocationKey{TaskID: a0.TaskID, Attempt: a0.Attempt}, node: a0.NodeID,
		priority: a0.Priority, qos: model.QoS(a0.QoS), tenant: a0.Tenant, project: a0.Project, draining: a0.Draining}
	for _, a := range rows {
		p.CPUMilli += a.CPUMilli
		p.MemMiB += a.HostMemoryMiB
		if a.DevicePos < 0 { // host-only placement (CPU task)
			continue
		}
		if a.DevicePos >= len(ni.Node.Devices) {
			return model.Placement{}, nil, fmt.Errorf("task %d: device %d not on node %s", a.TaskID, a.DevicePos, a.NodeID)
		}
		sl := model.Slice{Device: a.DevicePos, DeviceIndex: a.DeviceIndex, MemoryMiB: a.MemoryMiB,
			ComputeMilli: int32(a.ComputeMilli), QoS: model.QoS(a.QoS), Isolation: a.Isolation, Profile: a.Profile, Start: a.PartStart}
		if a.Profile != "" {
			for _, pr := range ni.Node.Devices[a.DevicePos].Isolation.Profiles {
				if pr.Name == a.Profile {
					sl.PartSlices, sl.PartSize = pr.ComputeSlices, pr.Size
				}
			}
		}
		p.Slices = append(p.Slices, sl)
		meta.vendor = append(meta.vendor, a.Vendor)
	}
	meta.slices = p.Slices
	return p, meta, nil
}

// loadLedger puts every stored placement into the cluster.
func (s *snapshot) loadLedger(rows []*controlplane.Allocation, now time.Time) error {
	for i := 0; i < len(rows); {
		j := i
		for j < len(rows) && rows[j].TaskID == rows[i].TaskID && rows[j].Attempt == rows[i].Attempt {
			j++
		}
		p, meta, err := s.placementOf(rows[i:j])
		if err != nil {
			return err
		}
		if err := s.cl.Assign(p); err != nil {
			return fmt.Errorf("ledger: %w", err)
		}
		meta.since = now
		s.placed[meta.key.TaskID] = meta
		i = j
	}
	return nil
}

// release frees one task's placement (no error when it is not there).
func (s *snapshot) release(taskID int64) bool {
	if _, ok := s.placed[taskID]; !ok {
		return false
	}
	delete(s.placed, taskID)
	_ = s.cl.Release(strconv.FormatInt(taskID, 10))
	return true
}

// running reads a node's last heartbeat list of running task attempts.
func running(n *controlplane.Node) map[controlplane.AllocationKey]bool {
	var rs []struct {
		TaskID  int64 `json:"task_id"`
		Attempt int   `json:"attempt"`
	}
	out := map[controlplane.AllocationKey]bool{}
	if len(n.Running) == 0 || json.Unmarshal(n.Running, &rs) != nil {
		return out
	}
	for _, r := range rs {
		out[controlplane.AllocationKey{TaskID: r.TaskID, Attempt: r.Attempt}] = true
	}
	return out
}

// buildSnapshot reads nodes and ledger from the store into a new snapshot.
func buildSnapshot(ctx context.Context, st Store, ratio float64, now time.Time) (*snapshot, error) {
	s, err := newSnapshot(ratio)
	if err != nil {
		return nil, err
	}
	nodes, err := allNodes(ctx, st)
	if err != nil {
		return nil, err
	}
	if _, err := s.syncNodes(nodes); err != nil {
		return nil, err
	}
	rows, err := st.ListAllocations(ctx, "")
	if err != nil {
		return nil, err
	}
	return s, s.loadLedger(rows, now)
}

func allNodes(ctx context.Context, st Store) ([]*controlplane.Node, error) {
	var out []*controlplane.Node
	for off := 0; ; off += controlplane.MaxPageLimit {
		ns, total, err := st.ListNodes(ctx, controlplane.NodeFilter{Page: controlplane.Page{Limit: controlplane.MaxPageLimit, Offset: off}})
		if err != nil {
			return nil, err
		}
		out = append(out, ns...)
		if len(out) >= total || len(ns) == 0 {
			return out, nil
		}
	}
}
