package model

import (
	"errors"
	"fmt"
	"math"
)

// Sentinel errors of the cluster and ledger.
var (
	ErrUnknownNode = errors.New("unknown node")
	ErrDuplicate   = errors.New("already exists")
	ErrNotFound    = errors.New("not found")
	ErrNoFit       = errors.New("does not fit")
)

// ModelKey is an interned (vendor, model) pair.
type ModelKey struct{ Vendor, Model string }

// Cluster is the scheduler's view of every node, its free capacity and the
// ledger of placements. It is not safe for concurrent use: the scheduler
// loop owns it (one cycle at a time, like kube-scheduler's cache).
type Cluster struct {
	Nodes  []*NodeInfo
	byName map[string]int
	models []ModelKey
	modIDs map[ModelKey]int
	ledger map[string]*Placement
	// ratioMilli is the bronze memory overcommit ratio ×1000 (1000 = none).
	ratioMilli int64
	// Epoch changes when nodes join, so caches keyed by node index reset.
	Epoch uint64
	// allocated is Σ placed compute milli, kept by Assign/Release.
	allocated int64
}

// NewCluster returns an empty cluster. bronzeOvercommit ≥ 1 is how far
// bronze slices may overcommit device memory (1.5 = 150%).
func NewCluster(bronzeOvercommit float64) (*Cluster, error) {
	if bronzeOvercommit < 1 || math.IsNaN(bronzeOvercommit) || bronzeOvercommit > 10 {
		return nil, fmt.Errorf("bronze overcommit ratio must be between 1 and 10, got %v", bronzeOvercommit)
	}
	return &Cluster{byName: map[string]int{}, modIDs: map[ModelKey]int{}, ledger: map[string]*Placement{},
		ratioMilli: int64(math.Round(bronzeOvercommit * 1000)), Epoch: 1}, nil
}

// RatioMilli is the bronze overcommit ratio ×1000.
func (c *Cluster) RatioMilli() int64 { return c.ratioMilli }

// AddNode validates n and adds it with all capacity free.
func (c *Cluster) AddNode(n Node) (*NodeInfo, error) {
	if err := n.Validate(); err != nil {
		return nil, err
	}
	if _, ok := c.byName[n.Name]; ok {
		return nil, fmt.Errorf("node %s: %w", n.Name, ErrDuplicate)
	}
	nn := n
	nn.Devices = append([]Device(nil), n.Devices...)
	for i := range nn.Devices {
		nn.Devices[i].modelID = c.internModel(nn.Devices[i].Vendor, nn.Devices[i].Model)
	}
	ni := newNodeInfo(len(c.Nodes), &nn)
	c.byName[n.Name] = ni.Index
	c.Nodes = append(c.Nodes, ni)
	c.Epoch++
	return ni, nil
}

func (c *Cluster) internModel(vendor, model string) int {
	k := ModelKey{vendor, model}
	if id, ok := c.modIDs[k]; ok {
		return id
	}
	c.modIDs[k] = len(c.models)
	c.models = append(c.models, k)
	return len(c.models) - 1
}

// Models lists the interned (vendor, model) pairs; index = model id.
func (c *Cluster) Models() []ModelKey { return c.models }

// Node returns the node named name.
func (c *Cluster) Node(name string) (*NodeInfo, error) {
	i, ok := c.byName[name]
	if !ok {
		return nil, fmt.Errorf("node %s: %w", name, ErrUnknownNode)
	}
	return c.Nodes[i], nil
}

// Capacity sums the cluster's devices (milli) and CPU.
func (c *Cluster) Capacity() (deviceMilli, cpuMilli int64) {
	for _, n := range c.Nodes {
		deviceMilli += int64(len(n.Devices)) * WholeMilli
		cpuMilli += n.Node.CPUMilli
	}
	return deviceMilli, cpuMilli
}

// Allocated is the compute milli held by placements (kept incrementally).
func (c *Cluster) Allocated() int64 { return c.allocated }
