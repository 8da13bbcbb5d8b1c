package model

import (
	"fmt"

	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// WholeMilli is one whole device in compute milli-units.
const WholeMilli = 1000

// RDMA capabilities of a node's fabric.
const (
	RDMANone       = ""
	RDMAInfiniBand = "infiniband"
	RDMARoCE       = "roce"
)

// Device is one accelerator as the scheduler sees it. It never changes after
// the node is added; the free capacity lives in DeviceState.
type Device struct {
	Index     int                 `json:"index"`
	UUID      string              `json:"uuid,omitempty"`
	Vendor    string              `json:"vendor"`
	Model     string              `json:"model"`
	MemoryMiB int64               `json:"memory_mib"` // 0 = unknown: only memory-free requests fit
	NUMA      int                 `json:"numa"`       // -1 = unknown
	Links     []inventory.Link    `json:"links,omitempty"`
	Isolation inventory.Isolation `json:"isolation"`
	// MIG: the GPU is in MIG mode and runs work only inside MIG instances:
	// no Silver or Bronze sharing and no whole-device Gold on it.
	MIG bool `json:"mig,omitempty"`
	// MIGReserved are the memory slices (bit i = slice i of 8) held by MIG
	// instances the inventory lists; the ledger's own partitions are OR-ed in.
	MIGReserved uint16 `json:"mig_reserved,omitempty"`
	// Card and Chip are the physical board and chip of a multi-chip card
	// (Ascend 310P: several logical chips per NPU ID; Kunlunxin: the /dev
	// minor), passed to the agent for the vendor CLI and device nodes.
	Card *int `json:"card,omitempty"`
	Chip *int `json:"chip,omitempty"`
	// RDMALink is the PCIe/NUMA path to the closest RDMA adapter with an
	// active port (pix … sys, AttachRDMA); "" when the node reports none.
	RDMALink inventory.LinkType `json:"rdma_link,omitempty"`

	modelID int // interned (vendor, model), set by Cluster.AddNode
}

// ModelID is the cluster-wide interned id of the device's (vendor, model).
func (d *Device) ModelID() int { return d.modelID }

// Node is one machine. Static after Cluster.AddNode.
type Node struct {
	Name      string            `json:"name"`
	Labels    map[string]string `json:"labels,omitempty"`
	CPUMilli  int64             `json:"cpu_milli"`
	MemoryMiB int64             `json:"memory_mib"`
	RDMA      string            `json:"rdma,omitempty"` // RDMANone, RDMAInfiniBand, RDMARoCE
	Devices   []Device          `json:"devices"`
}

// Validate checks a node description before it joins a cluster.
func (n *Node) Validate() error {
	switch {
	case n.Name == "":
		return fmt.Errorf("node: name is required")
	case n.CPUMilli < 0 || n.MemoryMiB < 0:
		return fmt.Errorf("node %s: cpu_milli and memory_mib must not be negative", n.Name)
	case n.RDMA != RDMANone && n.RDMA != RDMAInfiniBand && n.RDMA != RDMARoCE:
		return fmt.Errorf("node %s: rdma must be empty, %q or %q, not %q", n.Name, RDMAInfiniBand, RDMARoCE, n.RDMA)
	case len(n.Devices) > MaxDevicesPerNode:
		return fmt.Errorf("node %s: at most %d devices, got %d", n.Name, MaxDevicesPerNode, len(n.Devices))
	}
	for i := range n.Devices {
		d := &n.Devices[i]
		if d.Vendor == "" || d.Model == "" {
			return fmt.Errorf("node %s device %d: vendor and model are required", n.Name, d.Index)
		}
		if d.MemoryMiB < 0 {
			return fmt.Errorf("node %s device %d: memory_mib must not be negative", n.Name, d.Index)
		}
	}
	return nil
}

// MaxDevicesPerNode bounds a node's device list so that per-node scratch
// buffers can be fixed-size (no allocation in the scoring loop).
const MaxDevicesPerNode = 64

// NewNodeFromInventory builds a scheduler node from what an agent reported.
// Isolation capabilities the agent left empty are filled from the capability
// table (inventory.IsolationFor), so older agents still get correct QoS offers.
func NewNodeFromInventory(name string, labels map[string]string, cpuMilli, memoryMiB int64,
	rdma, vendor string, devs []inventory.Device) (Node, error) {
	n := Node{Name: name, Labels: labels, CPUMilli: cpuMilli, MemoryMiB: memoryMiB, RDMA: rdma}
	for _, d := range devs {
		sd := Device{Index: d.Index, Vendor: vendor, Model: d.Model, NUMA: -1,
			Links: d.Links, Isolation: d.Isolation, Card: d.Card, Chip: d.Chip}
		if d.UUID != nil {
			sd.UUID = *d.UUID
		}
		if d.MemoryTotalMiB != nil {
			sd.MemoryMiB = *d.MemoryTotalMiB
		}
		if d.NUMANode != nil {
			sd.NUMA = *d.NUMANode
		}
		if sd.Isolation.Hardware == "" && sd.Isolation.DriverLimits == "" && !sd.Isolation.Sharing {
			sd.Isolation = inventory.IsolationFor(vendor, d.Model)
		}
		sd.MIG, sd.MIGReserved = migState(&sd, d)
		n.Devices = append(n.Devices, sd)
	}
	if err := n.Validate(); err != nil {
		return Node{}, err
	}
	return n, nil
}
