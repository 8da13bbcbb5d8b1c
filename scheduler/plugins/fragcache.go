package plugins

import (
	"math"
	"os"
	"strconv"
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

// slotsOn is how many slices of m a device with free milli could take.
func (m *fragSpec) slotsOn(free int32) int32 {
	if m.milli <= 0 {
		return 1
	}
	return free / m.milli
}

var noCPUFrac, noMemFrac = os.Getenv("HF_NOCPUFRAC") != "", os.Getenv("HF_NOMEMFRAC") != ""

var hostOnly, _ = strconv.Atoi(os.Getenv("HF_HOSTONLY"))

var hostPerDevice = os.Getenv("HF_HOSTDEV") != ""

var hostAlpha = func() int64 {
	v, err := strconv.Atoi(os.Getenv("HF_HOSTALPHA"))
	if err != nil {
		return 100
	}
	return int64(v)
}()

// hostState is the host side of a node state that F_n(m) depends on.
type hostState struct{ cpu, mem int64 }

// specF is F_n(m) from the per-spec aggregates: everything free is a
// fragment unless the node can host m, then only the unusable devices.
//
// Host-aware (p.host), the node must also have the host memory for one
// instance, and the usable devices count only as far as the host can feed
// them: with g instances of m fitting on the devices and h ≤ g on the
// host's remaining CPU and memory, the fraction (g−h)/g of the usable free
// milli is stranded too. Example: 8 free devices, m = 1×470 milli with
// 11.9 cores, 48 free cores → g = 16, h = 4 → 3/4 of 8000 milli counts.
// FGD's rule is the h = 0 end of this; the fraction makes a placement that
// eats CPU next to idle devices cost what it strands.
func (p *Fragmentation) specF(m *fragSpec, h hostState, total int64, cnt int, lt int64, slots int32, modelOK bool) int64 {
	if m.n == 0 || h.cpu < m.cpu || !modelOK || cnt < m.n {
		return total
	}
	if !p.host {
		return lt
	}
	if h.mem < m.hostMem {
		return total
	}
	g := int64(slots) / int64(m.n)
	if hostPerDevice {
		g = int64(cnt) / int64(m.n)
	}
	hs := g
	if m.cpu > 0 && !noCPUFrac {
		hs = min(hs, h.cpu/m.cpu)
	}
	if m.hostMem > 0 && !noMemFrac {
		hs = min(hs, h.mem/m.hostMem)
	}
	if hostOnly == 1 && m.n > 1 || hostOnly == 2 && m.milli >= 1000 {
		return lt
	}
	if g <= 0 || hs >= g {
		return lt
	}
	return lt + (total-lt)*(g-hs)*hostAlpha/(g*100)
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
	for si := range p.specs {
		m := &p.specs[si]
		cnt, lt, slots := 0, int64(0), int32(0)
		for d := range n.Devices {
			st := &n.Devices[d]
			if m.usable(&devs[d], homog >= 0, st.FreeMilli, devs[d].MemoryMiB-st.MemUsed, shareable(st)) {
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
			if m.usable(d, homog >= 0, st.FreeMilli, memFree, shareable(st)) {
				cnt--
				slots -= m.slotsOn(st.FreeMilli)
			} else {
				lt -= int64(st.FreeMilli)
			}
			free := st.FreeMilli - s.ComputeMilli
			if m.usable(d, homog >= 0, free, memFree-model.AccountedMiB(s, ratio), qos != model.QoSGold) {
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

var scarceBeta, _ = strconv.Atoi(os.Getenv("HF_SCARCE"))

// scarcityLocked scales each spec's weight by how little of the cluster
// could host it when empty.
func (p *Fragmentation) scarcityLocked(cl *model.Cluster) {
	if scarceBeta == 0 {
		return
	}
	var capAll int64
	for _, n := range cl.Nodes {
		capAll += int64(len(n.Devices)) * model.WholeMilli
	}
	for si := range p.specs {
		m := &p.specs[si]
		if m.n == 0 {
			continue
		}
		var hostable int64
		for _, n := range cl.Nodes {
			if n.Node.CPUMilli < m.cpu || n.Node.MemoryMiB < m.hostMem || len(n.Devices) < m.n {
				continue
			}
			ok := 0
			for d := range n.Node.Devices {
				if m.allowed[n.Node.Devices[d].ModelID()] {
					ok++
				}
			}
			if ok >= m.n {
				hostable += int64(len(n.Devices)) * model.WholeMilli
			}
		}
		if hostable == 0 {
			continue
		}
		f := math.Pow(float64(capAll)/float64(hostable), float64(scarceBeta)/100)
		m.w = int64(math.Round(float64(m.w) * min(f, 20)))
	}
	p.nodes = make([]nodeCache, len(p.nodes))
}
