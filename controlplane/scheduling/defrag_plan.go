package scheduling

import (
	"sort"
	"strconv"

	"github.com/heteroflow/heteroflow/scheduler/model"
	"github.com/heteroflow/heteroflow/scheduler/plugins"
)

// DefragMove is one proposed relocation of a Bronze slice.
type DefragMove struct {
	TaskID     int64  `json:"task_id"`
	FromNode   string `json:"from_node"`
	FromDevice int    `json:"from_device_index"`
	ToNode     string `json:"to_node"`
	ToDevice   int    `json:"to_device_index"`
}

// FreedDevice is a device the plan empties.
type FreedDevice struct {
	Node   string       `json:"node"`
	Device int          `json:"device_index"`
	Moves  []DefragMove `json:"moves"`
}

// DefragPlan is the defragmentation proposal.
type DefragPlan struct {
	ScoreBefore float64 `json:"score_before"`
	ScoreAfter  float64 `json:"score_after"`
	// WorkloadFragBefore/After: FGD-class fragmentation under slicing
	// rules against the recent tasks' shapes (free compute no demanded
	// shape, MIG profile or vNPU template can use), % of device capacity.
	WorkloadFragBefore float64       `json:"workload_fragmentation_before" doc:"Fragmentation against the recent workload under slicing rules, % of device capacity"`
	WorkloadFragAfter  float64       `json:"workload_fragmentation_after" doc:"The same once the plan's moves are done"`
	Freed              []FreedDevice `json:"freed"`
}

// planDefrag works on a snapshot of its own (it changes it): greedily, the
// fragmented devices holding the least compute are emptied when each of
// their slices — single-device, restartable Bronze, not a gang member —
// fits on another partly used device. Moving onto partly used devices only
// (never onto a free one) is what makes whole devices free. A device is
// emptied only if the workload fragmentation under slicing rules (against
// recent, the recent requests) does not grow: a move must not strand
// capacity that the demanded MIG profiles or vNPU templates could use.
func planDefrag(sn *snapshot, recent []model.Request) DefragPlan {
	demand := partitionDemandOf(recent)
	out := DefragPlan{ScoreBefore: deviceStates(sn, demand).score()}
	meter := newWorkloadMeter(sn, recent)
	out.WorkloadFragBefore = meter.percent()
	type src struct {
		ni  *model.NodeInfo
		dev int
	}
	var srcs []src
	for i, ni := range sn.cl.Nodes {
		if sn.readiness(i) != nodeReadyState {
			continue
		}
		for d, st := range ni.Devices {
			if deviceState(st) == DeviceFragmented {
				srcs = append(srcs, src{ni, d})
			}
		}
	}
	sort.SliceStable(srcs, func(a, b int) bool {
		return srcs[a].ni.Devices[srcs[a].dev].FreeMilli > srcs[b].ni.Devices[srcs[b].dev].FreeMilli
	})
	for _, sc := range srcs {
		if deviceState(sc.ni.Devices[sc.dev]) != DeviceFragmented {
			continue // emptied or filled by an earlier move
		}
		var tasks []*placed
		movable := true
		for _, p := range sn.placed {
			if p.node != sc.ni.Node.Name {
				continue
			}
			for _, s := range p.slices {
				if s.Device == sc.dev {
					if p.qos != model.QoSBronze || len(p.slices) != 1 || p.gang || p.draining {
						movable = false
					}
					tasks = append(tasks, p)
				}
			}
		}
		if !movable || len(tasks) == 0 {
			continue
		}
		sort.Slice(tasks, func(a, b int) bool { return tasks[a].key.TaskID < tasks[b].key.TaskID })
		if fd, ok := tryEmpty(sn, sc.ni, sc.dev, tasks, meter); ok {
			out.Freed = append(out.Freed, fd)
		}
	}
	out.ScoreAfter = deviceStates(sn, demand).score()
	out.WorkloadFragAfter = meter.percent()
	return out
}

// workloadMeter is the slicing-rule fragmentation of a snapshot's cluster
// against recent requests (nil meter: no recent requests, always 0).
type workloadMeter struct {
	m        *plugins.FragMeter
	capacity int64
}

func newWorkloadMeter(sn *snapshot, recent []model.Request) *workloadMeter {
	w := &workloadMeter{}
	w.capacity, _ = sn.cl.Capacity()
	if len(recent) == 0 {
		return w
	}
	m, err := plugins.NewSlicingFragMeter(sn.cl, recent, 1)
	if err == nil {
		w.m = m
	}
	return w
}

func (w *workloadMeter) total() float64 {
	if w.m == nil {
		return 0
	}
	return w.m.Total()
}

func (w *workloadMeter) percent() float64 {
	if w.capacity == 0 {
		return 0
	}
	return 100 * w.total() / float64(w.capacity)
}

func (w *workloadMeter) update(nodes ...*model.NodeInfo) {
	if w.m == nil {
		return
	}
	for _, ni := range nodes {
		w.m.Update(ni)
	}
}

// tryEmpty moves every task off one device, or leaves the snapshot as it was.
func tryEmpty(sn *snapshot, from *model.NodeInfo, dev int, tasks []*placed, meter *workloadMeter) (FreedDevice, bool) {
	before := meter.total()
	fd := FreedDevice{Node: from.Node.Name, Device: from.Node.Devices[dev].Index}
	orig := make([]model.Placement, len(tasks))
	for i, p := range tasks {
		orig[i], _ = sn.cl.Placement(strconv.FormatInt(p.key.TaskID, 10))
		_ = sn.cl.Release(orig[i].TaskID)
	}
	var moved []model.Placement
	touched := func() []*model.NodeInfo {
		out := []*model.NodeInfo{from}
		for _, m := range moved {
			if ni, err := sn.cl.Node(m.Node); err == nil {
				out = append(out, ni)
			}
		}
		return out
	}
	undo := func() {
		nodes := touched()
		for _, m := range moved {
			_ = sn.cl.Release(m.TaskID)
		}
		for _, o := range orig {
			_ = sn.cl.Assign(o)
		}
		meter.update(nodes...)
	}
	for i, o := range orig {
		np, ok := relocate(sn, o, from.Index, dev)
		if !ok {
			undo()
			return fd, false
		}
		moved = append(moved, np)
		ti, _ := sn.cl.Node(np.Node)
		fd.Moves = append(fd.Moves, DefragMove{TaskID: tasks[i].key.TaskID, FromNode: o.Node, FromDevice: from.Node.Devices[dev].Index,
			ToNode: np.Node, ToDevice: ti.Node.Devices[np.Slices[0].Device].Index})
	}
	meter.update(touched()...)
	if meter.total() > before+1e-6 { // F sums floats: equal within rounding is no growth
		undo()
		return fd, false
	}
	return fd, true
}

// relocate places a one-slice Bronze placement on another partly used
// device that takes it.
func relocate(sn *snapshot, o model.Placement, fromNode, fromDev int) (model.Placement, bool) {
	s := o.Slices[0]
	r := &model.Request{ID: o.TaskID, DeviceCount: 1, MemoryMiB: s.MemoryMiB, ComputePercent: float64(s.ComputeMilli) / 10, QoS: model.QoSBronze}
	if r.Normalize() != nil {
		return o, false
	}
	for i, ni := range sn.cl.Nodes {
		if sn.readiness(i) != nodeReadyState || ni.FreeCPU < o.CPUMilli || ni.FreeMem < o.MemMiB {
			continue
		}
		for d := range ni.Devices {
			if (i == fromNode && d == fromDev) || deviceState(ni.Devices[d]) != DeviceFragmented {
				continue
			}
			ns, ok := model.FitDevice(&ni.Node.Devices[d], &ni.Devices[d], r, sn.cl.RatioMilli())
			if !ok {
				continue
			}
			ns.Device = d
			np := model.Placement{TaskID: o.TaskID, Node: ni.Node.Name, CPUMilli: o.CPUMilli, MemMiB: o.MemMiB, Slices: []model.Slice{ns}}
			if sn.cl.Assign(np) == nil {
				return np, true
			}
		}
	}
	return o, false
}
