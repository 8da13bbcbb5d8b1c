package scheduling

import (
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
// to 1 (nothing whole is free). It is what a whole-device task cannot use.
func (c stateCounts) score() float64 {
	if c.freeMilli == 0 {
		return 0
	}
	return float64(c.strandedMilli) / float64(c.freeMilli)
}

func deviceStates(s *snapshot) stateCounts {
	var c stateCounts
	if s == nil {
		return c
	}
	for i, ni := range s.cl.Nodes {
		if s.readiness(i) == nodeOffline {
			continue
		}
		for _, st := range ni.Devices {
			free := int64(max(st.FreeMilli, 0))
			c.freeMilli += free
			switch deviceState(st) {
			case DeviceFree:
				c.free++
			case DeviceAllocated:
				c.allocated++
			default:
				c.fragmented++
				c.strandedMilli += free
			}
		}
	}
	return c
}
