package model

import "fmt"

// CheckInvariants recomputes every node's state from the ledger and checks
// the rules the property tests hold the scheduler to:
//   - the state equals the sum of placements (free CPU, memory, compute,
//     accounted device memory, partition slices);
//   - no device is ever over its compute (1000 milli) or memory;
//   - gold never shares a device outside a hardware partition: a device
//     with a gold slice holds only gold partitions, or exactly one whole task.
func (c *Cluster) CheckInvariants() error {
	type agg struct {
		milli, mem, partMem int64
		partSlices          int
		gold, shared, whole int
		mask                uint16
	}
	var allocated int64
	for _, p := range c.ledger {
		for i := range p.Slices {
			allocated += int64(p.Slices[i].ComputeMilli)
		}
	}
	if allocated != c.allocated {
		return fmt.Errorf("cluster: allocated %d milli, ledger says %d", c.allocated, allocated)
	}
	byNode := make([][]*Placement, len(c.Nodes))
	for _, p := range c.ledger {
		byNode[p.nodeIdx] = append(byNode[p.nodeIdx], p)
	}
	for _, ni := range c.Nodes {
		cpu, mem := int64(0), int64(0)
		devs := make([]agg, len(ni.Devices))
		for _, p := range byNode[ni.Index] {
			cpu += p.CPUMilli
			mem += p.MemMiB
			for i := range p.Slices {
				s := &p.Slices[i]
				a := &devs[s.Device]
				a.milli += int64(s.ComputeMilli)
				switch {
				case s.QoS != QoSGold:
					a.shared++
					a.mem += accounted(s, c.ratioMilli)
				case s.Profile != "":
					a.gold++
					a.partMem += s.MemoryMiB
					a.partSlices += s.PartSlices
					if s.Start >= 0 {
						m := maskOf(s.Start, s.PartSize)
						if a.mask&m != 0 {
							return fmt.Errorf("node %s device %d: overlapping partitions", ni.Node.Name, s.Device)
						}
						a.mask |= m
					}
				default:
					a.whole++
					a.mem += s.MemoryMiB
				}
			}
		}
		if ni.FreeCPU != ni.Node.CPUMilli-cpu || ni.FreeMem != ni.Node.MemoryMiB-mem {
			return fmt.Errorf("node %s: host free cpu/mem %d/%d, ledger says %d/%d", ni.Node.Name,
				ni.FreeCPU, ni.FreeMem, ni.Node.CPUMilli-cpu, ni.Node.MemoryMiB-mem)
		}
		if ni.FreeCPU < 0 || ni.FreeMem < 0 {
			return fmt.Errorf("node %s: host cpu or memory overcommitted", ni.Node.Name)
		}
		var free int64
		for i, a := range devs {
			st, d := &ni.Devices[i], &ni.Node.Devices[i]
			free += int64(st.FreeMilli)
			switch {
			case int64(st.FreeMilli) != WholeMilli-a.milli:
				return fmt.Errorf("node %s device %d: free %d milli, ledger says %d", ni.Node.Name, i, st.FreeMilli, WholeMilli-a.milli)
			case a.milli > WholeMilli:
				return fmt.Errorf("node %s device %d: %d milli compute placed", ni.Node.Name, i, a.milli)
			case st.MemUsed != a.mem || st.PartMem != a.partMem || int(st.PartSlices) != a.partSlices || st.PartMask != a.mask:
				return fmt.Errorf("node %s device %d: memory/partition state differs from ledger", ni.Node.Name, i)
			case d.MemoryMiB > 0 && (a.mem > d.MemoryMiB || a.partMem > d.MemoryMiB):
				return fmt.Errorf("node %s device %d: memory over capacity", ni.Node.Name, i)
			case a.whole > 1 || (a.whole == 1 && (a.gold > 0 || a.shared > 0)) || (a.gold > 0 && a.shared > 0):
				return fmt.Errorf("node %s device %d: gold shares a device outside a hardware partition", ni.Node.Name, i)
			}
			if p := d.Isolation.Profiles; len(p) > 0 && a.partSlices > p[0].TotalSlices {
				return fmt.Errorf("node %s device %d: partitions exceed compute slices", ni.Node.Name, i)
			}
		}
		if free != ni.FreeMilli {
			return fmt.Errorf("node %s: free milli %d, devices sum to %d", ni.Node.Name, ni.FreeMilli, free)
		}
	}
	return nil
}
