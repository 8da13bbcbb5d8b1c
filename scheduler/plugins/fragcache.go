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
}

// weightScale turns popularity shares into integers (1e-6 resolution), so
// F is exact integer arithmetic: floating sums in different orders would
// turn true ties into arbitrary sub-epsilon differences, and REFERENCE.md
// shows the tie rule alone moves FGD by points.
const weightScale = 1e6

// usable: can device d (free milli, free memory, still shareable) take one
// slice of spec m?
func (m *fragSpec) usable(d *model.Device, homog bool, free int32, memFree int64, shareable bool) bool {
	return shareable && free >= m.milli && (homog || m.allowed[d.ModelID()]) && (m.mem == 0 || memFree >= m.mem)
}

// fits is usable for the current state of device d: FGD's rule, or under
// slicing rules the tier's placement rule (model.FitDevice).
func (m *fragSpec) fits(d *model.Device, st *model.DeviceState, homog bool, ratio int64) bool {
	if m.fit == nil {
		return m.usable(d, homog, st.FreeMilli, d.MemoryMiB-st.MemUsed, shareable(st))
	}
	if !homog && !m.allowed[d.ModelID()] {
		return false
	}
	if m.fit.QoS == model.QoSGold || d.MIG {
		_, ok := model.FitDevice(d, st, m.fit, ratio)
		return ok
	}
	// Silver and Bronze: model.FitDevice's rule spelt out for the hot path
	// (the cache recomputes every spec on every device of a changed node);
	// TestSharedFitsAgreesWithFitDevice holds the two together.
	if m.fit.QoS == model.QoSSilver {
		if d.Isolation.DriverLimits == "" || (m.n > 1 && vendorcatalog.SilverOneDeviceOnly(d.Vendor, d.Isolation.DriverLimits)) {
			return false
		}
	} else if !d.Isolation.Sharing {
		return false
	}
	return shareable(st) && st.FreeMilli >= m.milli && (m.mem == 0 || st.MemUsed+m.memAcc <= d.MemoryMiB)
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
	}
	nc.cnt, nc.lt, nc.slots = nc.cnt[:len(p.specs)], nc.lt[:len(p.specs)], nc.slots[:len(p.specs)]
	nc.total = 0
	for i := range n.Devices {
		nc.total += int64(n.Devices[i].FreeMilli)
	}
	homog := p.homogOf(n)
	devs := n.Node.Devices
	nc.f = 0
	hs := hostState{cpu: n.FreeCPU, mem: n.FreeMem}
	ratio := p.h.Cluster().RatioMilli()
	for si := range p.specs {
		m := &p.specs[si]
		cnt, lt, slots := 0, int64(0), int32(0)
		for d := range n.Devices {
			st := &n.Devices[d]
			if m.fits(&devs[d], st, homog >= 0, ratio) {
				cnt++
				slots += m.slotsOn(st.FreeMilli)
			} else {
				lt += int64(st.FreeMilli)
			}
		}
		nc.cnt[si], nc.lt[si], nc.slots[si] = int16(cnt), lt, slots
		nc.f += m.w * p.specF(m, hs, nc.total, cnt, lt, slots, homog < 0 || m.allowed[homog])
	}
	nc.version = n.Version
	return nc
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
	devs := n.Node.Devices
	before := hostState{cpu: n.FreeCPU, mem: n.FreeMem}
	var delta int64
	for si := range p.specs {
		m := &p.specs[si]
		cnt, lt, slots := int(nc.cnt[si]), nc.lt[si], nc.slots[si]
		for i := range slices {
			s := &slices[i]
			d, st := &devs[s.Device], &n.Devices[s.Device]
			memFree := d.MemoryMiB - st.MemUsed
			if m.fits(d, st, homog >= 0, ratio) {
				cnt--
				slots -= m.slotsOn(st.FreeMilli)
			} else {
				lt -= int64(st.FreeMilli)
			}
			free := st.FreeMilli - s.ComputeMilli
			var usableAfter bool
			if m.fit != nil {
				after := st.With(s, ratio)
				usableAfter = m.fits(d, &after, homog >= 0, ratio)
			} else {
				usableAfter = m.usable(d, homog >= 0, free, memFree-model.AccountedMiB(s, ratio), qos != model.QoSGold)
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
