package model

import (
	"fmt"
	"sort"

	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// Placement is one task's allocation: host resources on a node plus one
// ledger row (Slice) per device. The ledger is the sum of placements.
type Placement struct {
	TaskID   string  `json:"task_id"`
	Node     string  `json:"node"`
	CPUMilli int64   `json:"cpu_milli"`
	MemMiB   int64   `json:"host_memory_mib"`
	Slices   []Slice `json:"slices"`
	nodeIdx  int
}

// Assign re-checks that every slice still fits and records the placement.
// It is all-or-nothing: on error nothing changed.
func (c *Cluster) Assign(p Placement) error {
	if _, ok := c.ledger[p.TaskID]; ok {
		return fmt.Errorf("placement %s: %w", p.TaskID, ErrDuplicate)
	}
	ni, err := c.Node(p.Node)
	if err != nil {
		return err
	}
	if p.CPUMilli > ni.FreeCPU || p.MemMiB > ni.FreeMem {
		return fmt.Errorf("placement %s on %s: host cpu/memory: %w", p.TaskID, p.Node, ErrNoFit)
	}
	seen := uint64(0)
	for i := range p.Slices {
		s := &p.Slices[i]
		if s.Device < 0 || s.Device >= len(ni.Devices) {
			return fmt.Errorf("placement %s: device %d out of range on %s", p.TaskID, s.Device, p.Node)
		}
		if s.Device < 64 && seen&(1<<s.Device) != 0 {
			return fmt.Errorf("placement %s: device %d used twice", p.TaskID, s.Device)
		}
		seen |= 1 << (s.Device & 63)
		if !sliceFits(&ni.Node.Devices[s.Device], &ni.Devices[s.Device], s, c.ratioMilli) {
			return fmt.Errorf("placement %s: device %d on %s: %w", p.TaskID, s.Device, p.Node, ErrNoFit)
		}
	}
	ni.FreeCPU -= p.CPUMilli
	ni.FreeMem -= p.MemMiB
	for i := range p.Slices {
		s := &p.Slices[i]
		ni.Devices[s.Device].apply(s, c.ratioMilli)
		ni.FreeMilli -= int64(s.ComputeMilli)
		c.allocated += int64(s.ComputeMilli)
	}
	ni.Version++
	p.nodeIdx = ni.Index
	p.Slices = append([]Slice(nil), p.Slices...)
	c.ledger[p.TaskID] = &p
	return nil
}

// sliceFits re-validates an already chosen slice against the device state
// (the ledger never trusts its caller: it refuses what would overflow).
func sliceFits(d *Device, st *DeviceState, s *Slice, ratioMilli int64) bool {
	if s.ComputeMilli < 0 || st.FreeMilli < s.ComputeMilli {
		return false
	}
	switch {
	case s.QoS != QoSGold:
		return (st.Mode == ModeFree || st.Mode == ModeShared) &&
			(s.MemoryMiB == 0 || st.MemUsed+accounted(s, ratioMilli) <= d.MemoryMiB)
	case s.Profile != "":
		if st.Mode != ModeFree && st.Mode != ModePartitioned {
			return false
		}
		prof := profileByName(d, s.Profile)
		if prof == nil || prof.ComputeSlices != s.PartSlices || prof.Size != s.PartSize || prof.MemoryMiB != s.MemoryMiB ||
			int(st.PartSlices)+prof.ComputeSlices > prof.TotalSlices {
			return false
		}
		if len(prof.Starts) > 0 && !containsInt(prof.Starts, s.Start) {
			return false
		}
		if s.Start >= 0 && st.PartMask&maskOf(s.Start, s.PartSize) != 0 {
			return false
		}
		// MIG memory is bounded by the placement slots (nominal profile sizes).
		return len(prof.Starts) > 0 || d.MemoryMiB == 0 || st.PartMem+s.MemoryMiB <= d.MemoryMiB
	default:
		// A gold slice without a profile owns the whole device.
		return st.Mode == ModeFree && s.ComputeMilli == WholeMilli && (d.MemoryMiB == 0 || s.MemoryMiB <= d.MemoryMiB)
	}
}

func profileByName(d *Device, name string) *inventory.PartitionProfile {
	for i := range d.Isolation.Profiles {
		if d.Isolation.Profiles[i].Name == name {
			return &d.Isolation.Profiles[i]
		}
	}
	return nil
}

func containsInt(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// Release removes a placement and frees its capacity.
func (c *Cluster) Release(taskID string) error {
	p, ok := c.ledger[taskID]
	if !ok {
		return fmt.Errorf("placement %s: %w", taskID, ErrNotFound)
	}
	ni := c.Nodes[p.nodeIdx]
	ni.FreeCPU += p.CPUMilli
	ni.FreeMem += p.MemMiB
	for i := range p.Slices {
		s := &p.Slices[i]
		ni.Devices[s.Device].remove(s, c.ratioMilli)
		ni.FreeMilli += int64(s.ComputeMilli)
		c.allocated -= int64(s.ComputeMilli)
	}
	ni.Version++
	delete(c.ledger, taskID)
	return nil
}

// Placement returns the recorded placement of a task.
func (c *Cluster) Placement(taskID string) (Placement, bool) {
	p, ok := c.ledger[taskID]
	if !ok {
		return Placement{}, false
	}
	return *p, true
}

// Placements lists the ledger sorted by task id.
func (c *Cluster) Placements() []Placement {
	out := make([]Placement, 0, len(c.ledger))
	for _, p := range c.ledger {
		out = append(out, *p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].TaskID < out[j].TaskID })
	return out
}
