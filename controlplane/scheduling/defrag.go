package scheduling

import (
	"sort"

	"github.com/heteroflow/heteroflow/scheduler/model"
)

// Device allocation states (brief §2: 已分配/空闲/碎片化).
const (
	DeviceFree       = "free"       // nothing placed
	DeviceAllocated  = "allocated"  // no room left for any slice
	DeviceFragmented = "fragmented" // partly used: free capacity only small tasks can use
)

// deviceState classifies one device: fragmented when some compute is used
// and some is free (the free part is stranded for whole-device work).
func deviceState(st model.DeviceState) string {
	switch {
	case st.Slices == 0:
		return DeviceFree
	case st.FreeMilli <= 0 || st.Mode == model.ModeExclusive:
		return DeviceAllocated
	}
	return DeviceFragmented
}

// stateCounts totals devices of ready nodes by state, with compute milli.
type stateCounts struct {
	free, fragmented, allocated int
	freeMilli, strandedMilli    int64
}

// score is the cluster fragmentation score: the share of free compute that
// sits on partly used devices, 0 (every free milli on whole free devices)
// to 1 (nothing whole is free). It is what a whole-device task cannot use,
// except partition room (MIG, vNPU) that a partition the recent workload
// demands can still take (slicing rules, see partitionDemand).
func (c stateCounts) score() float64 {
	if c.freeMilli == 0 {
		return 0
	}
	return float64(c.strandedMilli) / float64(c.freeMilli)
}

func deviceStates(s *snapshot, demand partitionDemand) stateCounts {
	var c stateCounts
	if s == nil {
		return c
	}
	for i, ni := range s.cl.Nodes {
		if s.readiness(i) == nodeOffline {
			continue
		}
		for d, st := range ni.Devices {
			free := int64(max(st.FreeMilli, 0))
			c.freeMilli += free
			switch deviceState(st) {
			case DeviceFree:
				c.free++
			case DeviceAllocated:
				c.allocated++
			default:
				c.fragmented++
				if !demand.usable(&ni.Node.Devices[d], &st, s.cl.RatioMilli()) {
					c.strandedMilli += free
				}
			}
		}
	}
	return c
}

// partitionDemand is the distinct Gold hardware-partition shapes (one
// device, less than a whole one) of the recent workload.
type partitionDemand []model.Request

// maxPartitionShapes bounds the shapes tried per partitioned device (the
// score runs every tick: at most this many FitDevice calls per partitioned,
// partly used device; smallest shapes first, the likeliest to fit).
const maxPartitionShapes = 16

func partitionDemandOf(recent []model.Request) partitionDemand {
	var out partitionDemand
	seen := map[string]bool{}
	for i := range recent {
		r := recent[i]
		if r.QoS != model.QoSGold || r.DeviceCount != 1 || r.ComputeMilli >= model.WholeMilli || seen[r.ShapeKey()] {
			continue
		}
		seen[r.ShapeKey()] = true
		out = append(out, r)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].ComputeMilli != out[j].ComputeMilli {
			return out[i].ComputeMilli < out[j].ComputeMilli
		}
		return out[i].MemoryMiB < out[j].MemoryMiB
	})
	if len(out) > maxPartitionShapes {
		out = out[:maxPartitionShapes]
	}
	return out
}

// usable: d is partitioned (MIG, vNPU) and its room still takes one of the
// demanded partitions, so its free compute is not stranded.
func (pd partitionDemand) usable(d *model.Device, st *model.DeviceState, ratio int64) bool {
	if st.Mode != model.ModePartitioned {
		return false
	}
	for i := range pd {
		if !pd[i].ModelAllowed(d.Vendor, d.Model) {
			continue
		}
		if _, ok := model.FitDevice(d, st, &pd[i], ratio); ok {
			return true
		}
	}
	return false
}
