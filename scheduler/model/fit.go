package model

import (
	"github.com/heteroflow/heteroflow/receivers/inventory"
	"github.com/heteroflow/heteroflow/receivers/vendorcatalog"
)

// Slice is one device's share of a placement: the ledger row of
// ARCHITECTURE.md {device, memory MiB, compute %, isolation}.
type Slice struct {
	Device       int    `json:"device"`       // position in Node.Devices
	DeviceIndex  int    `json:"device_index"` // the vendor's index (CUDA index, …)
	MemoryMiB    int64  `json:"memory_mib"`
	ComputeMilli int32  `json:"compute_milli"`
	QoS          QoS    `json:"qos"`
	Isolation    string `json:"isolation"`         // "mig", "vnpu", "whole", "hami-core", "sharing", …
	Profile      string `json:"profile,omitempty"` // hardware partition profile
	Start        int    `json:"start"`             // MIG placement start slot, -1 when none
	PartSlices   int    `json:"-"`                 // compute slices of the profile
	PartSize     int    `json:"-"`                 // memory slices of the profile (MIG)
}

// IsolationBestEffort is a Silver slice on a device whose node enforces no
// Silver limits: visibility only, the task having allowed it.
const IsolationBestEffort = "best-effort"

// FitDevice decides whether one slice of r fits device d in state s and, if
// so, returns it. ratioMilli is the bronze memory overcommit ×1000.
// The QoS rules (ARCHITECTURE.md) live here and nowhere else:
//   - gold: a hardware partition that fits (smallest profile, first legal
//     start slot), or the whole free device when the model has none or the
//     task asks for all of it;
//   - silver: needs driver-level limits on the device; slices by MiB and %
//     (a BestEffort request also takes a sharing device without them);
//   - bronze: needs software sharing; memory may overcommit by the ratio.
func FitDevice(d *Device, s *DeviceState, r *Request, ratioMilli int64) (Slice, bool) {
	out := Slice{Device: -1, DeviceIndex: d.Index, MemoryMiB: r.MemoryMiB, ComputeMilli: r.ComputeMilli, QoS: r.QoS, Start: -1}
	if d.MIG && r.QoS != QoSGold {
		// A GPU in MIG mode runs nothing outside its instances: sharing it
		// would hand the task the whole GPU's UUID, which sees no CUDA device.
		return out, false
	}
	switch r.QoS {
	case QoSGold:
		return fitGold(d, s, r, out)
	case QoSSilver:
		if d.Isolation.DriverLimits == "" {
			if !r.BestEffort || !d.Isolation.Sharing {
				return out, false
			}
			// Nothing on the node enforces Silver; the task allowed a
			// shared, unenforced run (accounted as Silver: no overcommit).
			out.Isolation = IsolationBestEffort
			break
		}
		out.Isolation = d.Isolation.DriverLimits
		if r.DeviceCount > 1 && vendorcatalog.SilverOneDeviceOnly(d.Vendor, out.Isolation) {
			// One MPS control daemon per GPU (a client reaches one of them);
			// Cambricon's memory split names a single card.
			return out, false
		}
	default:
		if !d.Isolation.Sharing {
			return out, false
		}
		out.Isolation = "sharing"
	}
	if s.Mode != ModeFree && s.Mode != ModeShared {
		return out, false
	}
	if s.FreeMilli < r.ComputeMilli {
		return out, false
	}
	if r.MemoryMiB > 0 {
		capMiB := d.MemoryMiB
		if s.MemUsed+accounted(&out, ratioMilli) > capMiB {
			return out, false
		}
	}
	return out, true
}

// GoldMode reports whether a device in state s can take a Gold slice at
// all: only a free device (whole or partitioned) or one already
// hardware-partitioned can. A cheap test before FitDevice for callers that
// ask about many shapes.
func GoldMode(s *DeviceState) bool { return s.Mode == ModeFree || s.Mode == ModePartitioned }

func fitGold(d *Device, s *DeviceState, r *Request, out Slice) (Slice, bool) {
	hw := d.Isolation.Hardware
	whole := hw == "" || len(d.Isolation.Profiles) == 0 || r.ComputeMilli >= WholeMilli ||
		(d.MemoryMiB > 0 && r.MemoryMiB >= d.MemoryMiB)
	if d.MIG {
		// MIG mode: only an instance, the full 7g one for a whole-GPU ask.
		if len(d.Isolation.Profiles) == 0 {
			return out, false
		}
		whole = false
	}
	if whole {
		if s.Mode != ModeFree || (d.MemoryMiB > 0 && r.MemoryMiB > d.MemoryMiB) {
			return out, false
		}
		out.Isolation, out.ComputeMilli = "whole", WholeMilli
		if d.MemoryMiB > 0 {
			out.MemoryMiB = d.MemoryMiB
		}
		return out, true
	}
	if !GoldMode(s) {
		return out, false
	}
	// Profiles are listed smallest first; the first that covers the request
	// and has room is the tightest hardware partition.
	for i := range d.Isolation.Profiles {
		p := &d.Isolation.Profiles[i]
		if p.MemoryMiB < r.MemoryMiB || partitionMilli(p.ComputeSlices, p.TotalSlices) < r.ComputeMilli {
			continue
		}
		if int(s.PartSlices)+p.ComputeSlices > p.TotalSlices {
			continue
		}
		// MIG memory is bounded by the placement slots (the table's sizes are
		// nominal: an H100 80GB reports 81559 MiB, its 7g.80gb is 81920);
		// other partitions by the device's memory.
		if len(p.Starts) == 0 && d.MemoryMiB > 0 && s.PartMem+p.MemoryMiB > d.MemoryMiB {
			continue
		}
		start, ok := freeStart(p, s.PartMask|d.MIGReserved)
		if !ok {
			continue
		}
		out.Isolation, out.Profile, out.Start = hw, p.Name, start
		out.MemoryMiB, out.ComputeMilli = p.MemoryMiB, partitionMilli(p.ComputeSlices, p.TotalSlices)
		out.PartSlices, out.PartSize = p.ComputeSlices, p.Size
		return out, true
	}
	return out, false
}

// freeStart returns the first legal start slot whose memory slices are all
// free (MIG placement rule); profiles without slots (vNPU) start at -1.
func freeStart(p *inventory.PartitionProfile, used uint16) (int, bool) {
	if len(p.Starts) == 0 {
		return -1, true
	}
	for _, st := range p.Starts {
		if used&maskOf(st, p.Size) == 0 {
			return st, true
		}
	}
	return 0, false
}
