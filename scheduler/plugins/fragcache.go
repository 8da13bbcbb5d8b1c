package plugins

import (
	"github.com/heteroflow/heteroflow/receivers/vendorcatalog"
	"github.com/heteroflow/heteroflow/scheduler/model"
)

// This file is Fragmentation's incremental core: per node and target shape
// the number of devices that can take the shape and the free milli of the
// others, cached per node version; a candidate placement is priced from
// those aggregates in O(|M|) instead of recomputing F_n.

// nodeCache holds one node's per-spec aggregates at one node version.
type nodeCache struct {
	version uint64
	total   int64   // free milli on the node
	f       int64   // F_n × weightScale
	cnt     []int16 // per spec: devices that can take one slice of it
	lt      []int64 // per spec: free milli on the other devices
	slots   []int32 // per spec: slices of it the usable devices could take
	// usable: per spec, a bit per device that can take one slice of it
	// (what deltaLocked would otherwise re-derive for every candidate).
	usable []uint64
}

// weightScale turns popularity shares into integers (1e-6 resolution), so
// F is exact integer arithmetic: floating sums in different orders would
// turn true ties into arbitrary sub-epsilon differences, and REFERENCE.md
// shows the tie rule alone moves FGD by points.
const weightScale = 1e6

// usable: can device d (free milli, free memory, still shareable) take one
// slice of spec m?
func (m *fragSpec) usable(d *model.Device, homog bool, free int32, memFree int64, shareable bool) bool {
	return shareable && free >= m.milli && (homog || m.allowed[d.ModelID()]) && (m.mem == 0 || memFree >= m.memChk)
}

// Isolation classes of a shape under slicing rules: which devices its tier
// may use at all (model.FitDevice's tier rules, precomputed per node as
// device bit sets so the hot loops test one bit).
const (
	isoAny     = iota // FGD's rule: every device
	isoSilver         // Silver, one device: driver limits, not in MIG mode
	isoSilverN        // Silver over several devices: also not one-device-only (MPS, Cambricon split)
	isoBronze         // Bronze: software sharing, not in MIG mode
	isoClasses
)

// isoSets are one node's device bit sets per isolation class.
type isoSets [isoClasses]uint64

func nodeIsoSets(n *model.Node) isoSets {
	var s isoSets
	high := ^uint64(0) << len(n.Devices) // bits of no device: set, so a class every device is in is all ones
	for c := range s {
		s[c] = high
	}
	s[isoAny] = ^uint64(0)
	for i := range n.Devices {
		d := &n.Devices[i]
		bit := uint64(1) << i
		if d.MIG {
			continue // runs only inside MIG instances: Gold, priced by FitDevice
		}
		if d.Isolation.DriverLimits != "" {
			s[isoSilver] |= bit
			if !vendorcatalog.SilverOneDeviceOnly(d.Vendor, d.Isolation.DriverLimits) {
				s[isoSilverN] |= bit
			}
		}
		if d.Isolation.Sharing {
			s[isoBronze] |= bit
		}
	}
	return s
}

// fits is usable for the current state of device d. A Gold shape under
// slicing rules asks model.FitDevice (a MIG profile or vNPU template with
// room, or a whole free device); every other shape uses FGD's rule on
// devices its tier may use (isoOK), which for Silver and Bronze is exactly
// FitDevice's rule (TestSharedFitsAgreesWithFitDevice) at a fraction of
// its cost.
func (m *fragSpec) fits(d *model.Device, st *model.DeviceState, homog, isoOK bool, ratio int64) bool {
	if m.gold {
		if !model.GoldMode(st) || (!homog && !m.allowed[d.ModelID()]) {
			return false
		}
		_, ok := model.FitDevice(d, st, m.fit, ratio)
		return ok
	}
	return isoOK && m.usable(d, homog, st.FreeMilli, d.MemoryMiB-st.MemUsed, shareable(st))
}

// slotsOn is how many slices of m a device with free milli could take.
func (m *fragSpec) slotsOn(free int32) int32 {
	if m.milli <= 0 {
		return 1
	}
	return free / m.milli
}

// hostState is the host side of a node state that F_n(m) depends on.
type hostState struct{ cpu, mem int64 }

// specF is F_n(m) from the per-spec aggregates: everything free is a
// fragment unless the node can host m, then only the unusable devices.
//
// Host-aware (p.host), two rules are added for host memory, which
// ResourceFit enforces but FGD's measure ignores:
//   - a node without the host memory for one instance cannot host m, so all
//     its free milli is a fragment for m (as for CPU);
//   - for a shared shape (one device, less than a whole one) the usable
//     devices count only as far as the host memory can feed instances: with
//     g slices of m fitting on the devices and h < g instances in the free
//     host memory, the fraction (g−h)/g of the usable free milli is a
//     fragment too. Example: usable free 2000 milli, m = 470 milli with
//     100 GiB, 250 GiB free → g = 2+2 = 4, h = 2 → 1000 milli more.
//
// The same fraction for CPU, or for whole-device shapes, measured lower on
// the openb traces (docs/BENCHMARKS.md), so it is not applied.
func (p *Fragmentation) specF(m *fragSpec, h hostState, total int64, cnt int, lt int64, slots int32, modelOK bool) int64 {
	if m.n == 0 || h.cpu < m.cpu || !modelOK || cnt < m.n {
		return total
	}
	if !p.host || m.hostMem <= 0 {
		return lt
	}
	if h.mem < m.hostMem {
		return total
	}
	if m.n != 1 || m.milli >= model.WholeMilli {
		return lt
	}
	g, hs := int64(slots), h.mem/m.hostMem
	if hs >= g {
		return lt
	}
	return lt + (total-lt)*(g-hs)/g
}

func shareable(st *model.DeviceState) bool {
	return st.Mode == model.ModeFree || st.Mode == model.ModeShared
}

// stateLocked returns n's cached aggregates, recomputing them (O(|M| ×
// devices)) only when the node changed; candidates are then priced in
// O(|M|) each by deltaLocked.
func (p *Fragmentation) stateLocked(n *model.NodeInfo) *nodeCache {
	var nc *nodeCache
	if n.Index < len(p.nodes) {
		nc = &p.nodes[n.Index]
	} else {
		nc = &nodeCache{}
	}
	if nc.version == n.Version && len(nc.cnt) == len(p.specs) {
		return nc
	}
	if cap(nc.cnt) < len(p.specs) {
		nc.cnt = make([]int16, len(p.specs))
		nc.lt = make([]int64, len(p.specs))
		nc.slots = make([]int32, len(p.specs))
		nc.usable = make([]uint64, len(p.specs))
	}
	nc.cnt, nc.lt, nc.slots = nc.cnt[:len(p.specs)], nc.lt[:len(p.specs)], nc.slots[:len(p.specs)]
	nc.usable = nc.usable[:len(p.specs)]
	nc.total = 0
	for i := range n.Devices {
		nc.total += int64(n.Devices[i].FreeMilli)
	}
	homog := p.homogOf(n)
	devs := n.Node.Devices
	nc.f = 0
	hs := hostState{cpu: n.FreeCPU, mem: n.FreeMem}
	ratio := p.h.Cluster().RatioMilli()
	iso := p.isoOf(n)
	for si := range p.specs {
		m := &p.specs[si]
		cnt, lt, slots, usable := 0, int64(0), int32(0), uint64(0)
		for d := range n.Devices {
			st := &n.Devices[d]
			var ok bool
			if m.gold {
				ok = m.fits(&devs[d], st, homog >= 0, true, ratio)
			} else {
				ok = iso[m.cls]&(1<<d) != 0 && m.usable(&devs[d], homog >= 0, st.FreeMilli, devs[d].MemoryMiB-st.MemUsed, shareable(st))
			}
			if ok {
				cnt++
				slots += m.slotsOn(st.FreeMilli)
				usable |= 1 << d
			} else {
				lt += int64(st.FreeMilli)
			}
		}
		nc.cnt[si], nc.lt[si], nc.slots[si], nc.usable[si] = int16(cnt), lt, slots, usable
		nc.f += m.w * p.specF(m, hs, nc.total, cnt, lt, slots, homog < 0 || m.allowed[homog])
	}
	nc.version = n.Version
	return nc
}

// isoOf is n's device bit sets per isolation class.
func (p *Fragmentation) isoOf(n *model.NodeInfo) *isoSets {
	if n.Index < len(p.iso) {
		return &p.iso[n.Index]
	}
	s := nodeIsoSets(n.Node)
	return &s
}

func (p *Fragmentation) homogOf(n *model.NodeInfo) int {
	if n.Index < len(p.homog) {
		return p.homog[n.Index]
	}
	return homogeneousModel(n.Node)
}

// deltaLocked prices placing slices (and moving the free host CPU and
// memory to after) on n from the cached aggregates: each changed device
// leaves or joins each spec's usable set. Exact integer arithmetic
// (weights × milli).
func (p *Fragmentation) deltaLocked(n *model.NodeInfo, nc *nodeCache, after hostState, slices []model.Slice, qos model.QoS, ratio int64) int64 {
	totalAfter := nc.total
	for i := range slices {
		totalAfter -= int64(slices[i].ComputeMilli)
	}
	homog := p.homogOf(n)
	iso := p.isoOf(n)
	devs := n.Node.Devices
	before := hostState{cpu: n.FreeCPU, mem: n.FreeMem}
	if p.slicingGold {
		// Each changed device's state after the placement, once for all
		// Gold specs (FitDevice needs the whole state).
		for i := range slices {
			p.after[i] = n.Devices[slices[i].Device].With(&slices[i], ratio)
		}
	}
	delta := p.deadDelta(n, slices)
	for si := range p.specs {
		m := &p.specs[si]
		cnt, lt, slots := int(nc.cnt[si]), nc.lt[si], nc.slots[si]
		for i := range slices {
			s := &slices[i]
			d, st := &devs[s.Device], &n.Devices[s.Device]
			memFree := d.MemoryMiB - st.MemUsed
			// A placement only takes capacity away, so a device that could
			// not take a slice of m before cannot after it either: only a
			// usable one is checked again.
			usableBefore := nc.usable[si]&(1<<s.Device) != 0
			if usableBefore {
				cnt--
				slots -= m.slotsOn(st.FreeMilli)
			} else {
				lt -= int64(st.FreeMilli)
			}
			free := st.FreeMilli - s.ComputeMilli
			usableAfter := false
			switch {
			case !usableBefore:
			case m.gold:
				usableAfter = m.fits(d, &p.after[i], homog >= 0, true, ratio)
			default:
				isoOK := iso[m.cls]&(1<<s.Device) != 0
				usableAfter = isoOK && m.usable(d, homog >= 0, free, memFree-model.AccountedMiB(s, ratio), qos != model.QoSGold)
			}
			if usableAfter {
				cnt++
				slots += m.slotsOn(free)
			} else {
				lt += int64(free)
			}
		}
		modelOK := homog < 0 || m.allowed[homog]
		delta += m.w * (p.specF(m, after, totalAfter, cnt, lt, slots, modelOK) - p.specF(m, before, nc.total, int(nc.cnt[si]), nc.lt[si], nc.slots[si], modelOK))
	}
	return delta
}
