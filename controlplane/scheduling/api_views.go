package scheduling

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/httpapi"
)

// freshSnapshot builds a private snapshot from the store (any server).
func (s *Service) freshSnapshot(r *http.Request) (*snapshot, error) {
	return buildSnapshot(r.Context(), s.store, s.cfg.BronzeOvercommit, s.now())
}

func (s *Service) why(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	t, err := httpapi.LoadVisibleTask(r.Context(), s.store, id, false)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := map[string]any{"task_id": t.ID, "state": t.State, "reason": t.Reason, "pending": !t.State.Terminal() &&
		(t.State == controlplane.TaskSubmitted || t.State == controlplane.TaskQueued)}
	ts, err := s.store.GetTaskSchedule(r.Context(), id)
	switch {
	case errors.Is(err, controlplane.ErrNotFound):
		out["last_attempt"] = nil
	case err != nil:
		s.fail(w, r, err)
		return
	default:
		out["last_attempt"] = json.RawMessage(ts.Why)
		out["preemptions"] = ts.Preemptions
		out["failed_cycles"] = ts.Attempts
	}
	writeJSON(w, http.StatusOK, out)
}

// sliceJSON is one ledger row as the slices page shows it.
type sliceJSON struct {
	TaskID         int64  `json:"task_id"`
	Attempt        int    `json:"attempt"`
	QoS            string `json:"qos"`
	MemoryMiB      int64  `json:"memory_mib"`
	ComputePercent int    `json:"compute_percent"`
	Isolation      string `json:"isolation"`
	Profile        string `json:"profile,omitempty"`
	Tenant         string `json:"tenant,omitempty"`
	Project        string `json:"project,omitempty"`
	Priority       int    `json:"priority"`
	Draining       bool   `json:"draining"`
}

// deviceJSON is one device with its allocation state and slices.
type deviceJSON struct {
	Node             string      `json:"node"`
	Hostname         string      `json:"hostname"`
	Online           bool        `json:"online"`
	Vendor           string      `json:"vendor"`
	Model            string      `json:"model"`
	Index            int         `json:"index"`
	UUID             string      `json:"uuid,omitempty"`
	MemoryMiB        int64       `json:"memory_mib"`
	AllocatedMiB     int64       `json:"allocated_memory_mib"`
	AllocatedPercent int         `json:"allocated_compute_percent"`
	FreePercent      int         `json:"free_compute_percent"`
	State            string      `json:"state"` // free | fragmented | allocated
	Slices           []sliceJSON `json:"slices"`
}

func (s *Service) deviceViews(r *http.Request) ([]deviceJSON, stateCounts, *snapshot, error) {
	sn, err := s.freshSnapshot(r)
	if err != nil {
		return nil, stateCounts{}, nil, err
	}
	rows, err := s.store.ListAllocations(r.Context(), "")
	if err != nil {
		return nil, stateCounts{}, nil, err
	}
	type key struct {
		node string
		pos  int
	}
	byDev := map[key][]sliceJSON{}
	for _, a := range rows {
		if a.DevicePos < 0 {
			continue
		}
		byDev[key{a.NodeID, a.DevicePos}] = append(byDev[key{a.NodeID, a.DevicePos}], sliceJSON{TaskID: a.TaskID, Attempt: a.Attempt,
			QoS: string(a.QoS), MemoryMiB: a.MemoryMiB, ComputePercent: a.ComputeMilli / 10, Isolation: a.Isolation, Profile: a.Profile,
			Tenant: a.Tenant, Project: a.Project, Priority: a.Priority, Draining: a.Draining})
	}
	var out []deviceJSON
	for i, ni := range sn.cl.Nodes {
		e := sn.byIdx[i]
		for d, st := range ni.Devices {
			dv := ni.Node.Devices[d]
			sl := byDev[key{ni.Node.Name, d}]
			var mem int64
			for _, x := range sl {
				mem += x.MemoryMiB
			}
			if sl == nil {
				sl = []sliceJSON{}
			}
			out = append(out, deviceJSON{Node: ni.Node.Name, Hostname: e.node.Hostname, Online: e.state != nodeOffline,
				Vendor: dv.Vendor, Model: dv.Model, Index: dv.Index, UUID: dv.UUID, MemoryMiB: dv.MemoryMiB, AllocatedMiB: mem,
				AllocatedPercent: int(1000-st.FreeMilli) / 10, FreePercent: int(st.FreeMilli) / 10, State: deviceState(st), Slices: sl})
		}
	}
	return out, deviceStates(sn), sn, nil
}

func (s *Service) slices(w http.ResponseWriter, r *http.Request) {
	devs, st, _, err := s.deviceViews(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": devs, "total": len(devs), "fragmentation_score": st.score(),
		"devices": map[string]int{DeviceFree: st.free, DeviceFragmented: st.fragmented, DeviceAllocated: st.allocated}})
}

func (s *Service) summary(w http.ResponseWriter, r *http.Request) {
	devs, st, sn, err := s.deviceViews(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := map[string]any{}
	var total, online, busy int
	var freeMem, memTotal, allocPct, pctTotal int64
	for _, d := range devs {
		total++
		if !d.Online {
			continue
		}
		online++
		if len(d.Slices) > 0 {
			busy++
		}
		memTotal += d.MemoryMiB
		freeMem += max(d.MemoryMiB-d.AllocatedMiB, 0)
		allocPct += int64(d.AllocatedPercent)
		pctTotal += 100
	}
	nodesOnline, health := 0, map[string]int{}
	for _, e := range sn.byIdx {
		if e.node.State == controlplane.NodeOnline {
			nodesOnline++
		}
		h := e.node.Health
		if h == "" {
			h = "unknown"
		}
		health[h]++
	}
	counts := map[string]int{}
	for _, state := range controlplane.AllTaskStates {
		_, n, err := s.store.ListTasks(r.Context(), controlplane.TaskFilter{States: []controlplane.TaskState{state}, Page: controlplane.Page{Limit: 1}})
		if err != nil {
			s.fail(w, r, err)
			return
		}
		counts[string(state)] = n
	}
	ended := counts["succeeded"] + counts["failed"] + counts["cancelled"] + counts["timed_out"]
	out["gpus"] = map[string]int{"total": total, "online": online, "busy": busy}
	out["memory_mib"] = map[string]int64{"total": memTotal, "free": freeMem}
	out["slice_utilization"] = ratio(float64(allocPct), float64(pctTotal))
	out["nodes"] = map[string]any{"total": len(sn.byIdx), "online": nodesOnline, "online_rate": ratio(float64(nodesOnline), float64(len(sn.byIdx))), "health": health}
	out["tasks"] = counts
	out["task_completion_rate"] = ratio(float64(counts["succeeded"]), float64(ended))
	out["fragmentation"] = map[string]any{"score": st.score(), "free": st.free, "fragmented": st.fragmented, "allocated": st.allocated}
	s.mu.Lock()
	out["scheduler"] = map[string]any{"leader": s.leader, "holder": s.holder, "last_tick": s.lastTick}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

// ratio is a/b, or nil (JSON null: unknown is absent, never 0) when b is 0.
func ratio(a, b float64) any {
	if b == 0 {
		return nil
	}
	return a / b
}

func (s *Service) defragPlan(w http.ResponseWriter, r *http.Request) {
	sn, err := s.freshSnapshot(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	p := planDefrag(sn)
	writeJSON(w, http.StatusOK, defragAnswer{Plan: p, ExecuteAllowed: s.cfg.AllowDefrag})
}

// defragExecute requeues the tasks of the plan's moves ({"execute": true}),
// when the configuration allows it; the scheduler re-places them. Without
// execute it is a dry run answering the plan, as GET does.
func (s *Service) defragExecute(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Execute bool `json:"execute"`
	}
	if err := decode(r, &body); err != nil {
		s.fail(w, r, err)
		return
	}
	if !body.Execute {
		s.defragPlan(w, r)
		return
	}
	if !s.cfg.AllowDefrag {
		s.fail(w, r, fmt.Errorf("%w: defragmentation moves are disabled by the server configuration (scheduler allow_defrag)", controlplane.ErrForbidden))
		return
	}
	sn, err := s.freshSnapshot(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	p := planDefrag(sn)
	httpapi.SetAudit(r.Context(), "scheduler.defrag", "cluster")
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.leader || s.snap == nil {
		s.fail(w, r, fmt.Errorf("%w: %v; send it to the leader", controlplane.ErrConflict, errNotLeader))
		return
	}
	var moved []int64
	now := s.now()
	for _, fd := range p.Freed {
		for _, m := range fd.Moves {
			pl, ok := s.snap.placed[m.TaskID]
			if !ok || pl.draining {
				continue
			}
			from := controlplane.TaskScheduled
			if pl.running {
				from = controlplane.TaskRunning
			}
			reason := fmt.Sprintf("defragmentation: moved off %s device #%d to free it whole", fd.Node, fd.Device)
			if err := s.requeueLocked(r.Context(), m.TaskID, from, reason); err != nil {
				if errors.Is(err, controlplane.ErrConflict) {
					continue
				}
				s.fail(w, r, err)
				return
			}
			pl.draining, pl.since = true, now
			moved = append(moved, m.TaskID)
		}
	}
	sort.Slice(moved, func(i, j int) bool { return moved[i] < moved[j] })
	writeJSON(w, http.StatusOK, defragExecuted{Plan: p, Requeued: moved})
}
