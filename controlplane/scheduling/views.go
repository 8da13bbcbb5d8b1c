package scheduling

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/apitypes"
	"github.com/heteroflow/heteroflow/scheduler/model"
)

// The scheduler's operations and views for its REST API: plugins, quotas,
// why a task waits, every device's slices, the cluster summary and
// defragmentation. They are plain Go; the HTTP adapters, the routes and
// their OpenAPI documentation live in schedulingapi.

// PluginList is the live profile's plugins in order.
type PluginList struct {
	Items   []PluginState `json:"items"`
	Profile string        `json:"profile" doc:"Name of the scheduling profile in force"`
}

// PluginPatch changes one plugin; nil fields are left as they are.
type PluginPatch struct {
	Enabled *bool    `json:"enabled"`
	Weight  *float64 `json:"weight"`
}

// Plugins lists the plugins with their effective settings (stored settings
// over the profile).
func (s *Service) Plugins(ctx context.Context) (PluginList, error) {
	stored, err := s.store.ListPluginSettings(ctx)
	if err != nil {
		return PluginList{}, err
	}
	cur := currentSettings(s.cfg.Profile, stored)
	reg := registry(nil, s.extra)
	out := make([]PluginState, len(cur))
	for i, c := range cur {
		out[i] = PluginState{Name: c.Name, Enabled: c.Enabled, Weight: c.Weight, Position: i, Assign: c.Name == s.cfg.Profile.Assign,
			Points: extensionPoints(reg, c.Name)}
	}
	return PluginList{Items: out, Profile: s.cfg.Profile.Name}, nil
}

// effectiveSettings are the stored plugin settings over the profile.
func (s *Service) effectiveSettings(ctx context.Context) ([]controlplane.PluginSetting, error) {
	stored, err := s.store.ListPluginSettings(ctx)
	if err != nil {
		return nil, err
	}
	return currentSettings(s.cfg.Profile, stored), nil
}

// PatchPlugin enables, disables or reweights one plugin. The Assign plugin
// cannot be disabled: it picks the devices.
func (s *Service) PatchPlugin(ctx context.Context, name string, p PluginPatch) (PluginList, error) {
	cur, err := s.effectiveSettings(ctx)
	if err != nil {
		return PluginList{}, err
	}
	found := false
	for i := range cur {
		if cur[i].Name != name {
			continue
		}
		found = true
		if p.Enabled != nil {
			if !*p.Enabled && name == s.cfg.Profile.Assign {
				return PluginList{}, controlplane.Invalidf("%s picks devices and cannot be disabled", name)
			}
			cur[i].Enabled = *p.Enabled
		}
		if p.Weight != nil {
			if *p.Weight < 0 || *p.Weight > 1e6 {
				return PluginList{}, controlplane.Invalidf("weight must be between 0 and 1e6")
			}
			cur[i].Weight = *p.Weight
		}
	}
	if !found {
		return PluginList{}, fmt.Errorf("plugin %q: %w", name, controlplane.ErrNotFound)
	}
	if err := s.saveSettings(ctx, cur); err != nil {
		return PluginList{}, err
	}
	return s.Plugins(ctx)
}

// SetPluginOrder sets the evaluation order; order names every plugin once.
func (s *Service) SetPluginOrder(ctx context.Context, order []string) (PluginList, error) {
	cur, err := s.effectiveSettings(ctx)
	if err != nil {
		return PluginList{}, err
	}
	byName := map[string]controlplane.PluginSetting{}
	for _, c := range cur {
		byName[c.Name] = c
	}
	if len(order) != len(cur) {
		return PluginList{}, controlplane.Invalidf("order must list each of the %d plugins exactly once", len(cur))
	}
	next := make([]controlplane.PluginSetting, 0, len(cur))
	for i, n := range order {
		c, ok := byName[n]
		if !ok {
			return PluginList{}, controlplane.Invalidf("order must list each of the %d plugins exactly once (%q unknown or repeated)", len(cur), n)
		}
		delete(byName, n)
		c.Position = i
		next = append(next, c)
	}
	if err := s.saveSettings(ctx, next); err != nil {
		return PluginList{}, err
	}
	return s.Plugins(ctx)
}

// saveSettings persists settings and, on the leader, applies them at once.
func (s *Service) saveSettings(ctx context.Context, next []controlplane.PluginSetting) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fw != nil {
		if err := s.applySettingsLocked(next); err != nil {
			return err
		}
	} else if _, err := s.buildFramework(mustSnapshot(s.cfg.BronzeOvercommit), next); err != nil {
		return controlplane.Invalidf("%v", err) // followers validate by building
	}
	return s.store.PutPluginSettings(ctx, next)
}

func mustSnapshot(ratio float64) *snapshot {
	sn, err := newSnapshot(ratio)
	if err != nil {
		panic(err) // ratio validated by Config
	}
	return sn
}

var errNotLeader = errors.New("this server is not the scheduler leader")

// ---- quotas ----

// QuotaView is a quota with its current use.
type QuotaView struct {
	ID             int64  `json:"id"`
	Tenant         string `json:"tenant"`
	Project        string `json:"project"`
	Vendor         string `json:"vendor"`
	Devices        int64  `json:"devices"`
	MemoryMiB      int64  `json:"memory_mib"`
	ComputePercent int64  `json:"compute_percent"`
	Policy         string `json:"policy"`
	Used           *Usage `json:"used,omitempty"`
	CreatedAt      string `json:"created_at,omitempty"`
	UpdatedAt      string `json:"updated_at,omitempty"`
}

// QuotaList is every quota with its use.
type QuotaList struct {
	Items []QuotaView `json:"items"`
	Total int         `json:"total"`
}

// Validate checks the quota's own fields as the store will.
func (q QuotaView) Validate() error { return q.domain().Validate() }

func (q QuotaView) domain() *controlplane.Quota {
	return &controlplane.Quota{ID: q.ID, Tenant: q.Tenant, Project: q.Project, Vendor: q.Vendor, Devices: q.Devices,
		MemoryMiB: q.MemoryMiB, ComputePercent: q.ComputePercent, Policy: controlplane.QuotaPolicy(q.Policy)}
}

// usageFromLedger sums the stored ledger for q (works on every server).
func usageFromLedger(q *controlplane.Quota, rows []*controlplane.Allocation) Usage {
	var u Usage
	for _, a := range rows {
		if a.DevicePos < 0 || a.Tenant != q.Tenant || (q.Project != "" && a.Project != q.Project) ||
			(q.Vendor != "" && a.Vendor != q.Vendor) {
			continue
		}
		u.Devices++
		u.MemoryMiB += a.MemoryMiB
		u.ComputePercent += int64(a.ComputeMilli) / 10
	}
	return u
}

// quotaOut is q as a view, with its use summed from rows when withUse (an
// empty ledger is zero use, not unknown, so rows may be nil then).
func quotaOut(q *controlplane.Quota, rows []*controlplane.Allocation, withUse bool) QuotaView {
	out := QuotaView{ID: q.ID, Tenant: q.Tenant, Project: q.Project, Vendor: q.Vendor, Devices: q.Devices, MemoryMiB: q.MemoryMiB,
		ComputePercent: q.ComputePercent, Policy: string(q.Policy), CreatedAt: q.CreatedAt.Format(timeFmt), UpdatedAt: q.UpdatedAt.Format(timeFmt)}
	if withUse {
		u := usageFromLedger(q, rows)
		out.Used = &u
	}
	return out
}

const timeFmt = "2006-01-02T15:04:05.000000Z07:00"

// Quotas lists every quota with its use from the ledger.
func (s *Service) Quotas(ctx context.Context) (QuotaList, error) {
	qs, err := s.store.ListQuotas(ctx)
	if err != nil {
		return QuotaList{}, err
	}
	rows, err := s.store.ListAllocations(ctx, "")
	if err != nil {
		return QuotaList{}, err
	}
	items := make([]QuotaView, 0, len(qs))
	for _, q := range qs {
		items = append(items, quotaOut(q, rows, true))
	}
	return QuotaList{Items: items, Total: len(items)}, nil
}

// CreateQuota stores a new quota (its ID is assigned) and enforces it at
// once on this server.
func (s *Service) CreateQuota(ctx context.Context, in QuotaView) (QuotaView, error) {
	q := in.domain()
	q.ID = 0
	if err := s.store.CreateQuota(ctx, q); err != nil {
		return QuotaView{}, err
	}
	s.reloadQuotas(ctx)
	return quotaOut(q, nil, false), nil
}

// Quota is one quota with its use.
func (s *Service) Quota(ctx context.Context, id int64) (QuotaView, error) {
	q, err := s.store.GetQuota(ctx, id)
	if err != nil {
		return QuotaView{}, err
	}
	rows, err := s.store.ListAllocations(ctx, "")
	if err != nil {
		return QuotaView{}, err
	}
	return quotaOut(q, rows, true), nil
}

// UpdateQuota replaces quota id; the change is in force on this server
// when it returns.
func (s *Service) UpdateQuota(ctx context.Context, id int64, in QuotaView) (QuotaView, error) {
	q := in.domain()
	q.ID = id
	if err := s.store.UpdateQuota(ctx, q); err != nil {
		return QuotaView{}, err
	}
	s.reloadQuotas(ctx)
	got, err := s.store.GetQuota(ctx, id)
	if err != nil {
		return QuotaView{}, err
	}
	return quotaOut(got, nil, false), nil
}

// DeleteQuota removes quota id; no longer enforced on this server when it
// returns.
func (s *Service) DeleteQuota(ctx context.Context, id int64) error {
	if err := s.store.DeleteQuota(ctx, id); err != nil {
		return err
	}
	s.reloadQuotas(ctx)
	return nil
}

// reloadQuotas makes a quota change take effect at once on this server
// (the loop re-reads quotas every NodeSync otherwise, which is how other
// servers' changes reach the leader).
func (s *Service) reloadQuotas(ctx context.Context) {
	qs, err := s.store.ListQuotas(ctx)
	if err != nil {
		s.log.Warn("scheduling: reload quotas", "err", err)
		return
	}
	s.mu.Lock()
	s.quotas = qs
	s.mu.Unlock()
}

// ---- why a task waits ----

// WhyPending says why a task waits: per node and plugin in the last cycle.
type WhyPending struct {
	TaskID       int64                  `json:"task_id"`
	State        controlplane.TaskState `json:"state"`
	Reason       string                 `json:"reason"`
	Pending      bool                   `json:"pending"`
	LastAttempt  json.RawMessage        `json:"last_attempt" doc:"The last scheduling cycle: per node and plugin, why it was refused; null before the first cycle"`
	Preemptions  int                    `json:"preemptions"`
	FailedCycles int                    `json:"failed_cycles"`
}

// Why explains t's wait from its last scheduling cycle. The caller has
// checked that it may see t.
func (s *Service) Why(ctx context.Context, t *controlplane.Task) (WhyPending, error) {
	out := WhyPending{TaskID: t.ID, State: t.State, Reason: t.Reason, Pending: !t.State.Terminal() &&
		(t.State == controlplane.TaskSubmitted || t.State == controlplane.TaskQueued), LastAttempt: json.RawMessage("null")}
	ts, err := s.store.GetTaskSchedule(ctx, t.ID)
	switch {
	case errors.Is(err, controlplane.ErrNotFound):
	case err != nil:
		return WhyPending{}, err
	default:
		out.LastAttempt = json.RawMessage(ts.Why)
		out.Preemptions, out.FailedCycles = ts.Preemptions, ts.Attempts
	}
	return out, nil
}

// ---- devices, slices, summary ----

// SliceView is one ledger row as the slices page shows it.
type SliceView struct {
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

// DeviceView is one device with its allocation state and slices.
type DeviceView struct {
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
	State            string      `json:"state" enum:"free,fragmented,allocated"`
	Slices           []SliceView `json:"slices"`
}

// SliceList is every device with its slices.
type SliceList struct {
	Items              []DeviceView   `json:"items"`
	Total              int            `json:"total"`
	FragmentationScore float64        `json:"fragmentation_score"`
	Devices            map[string]int `json:"devices" doc:"Device count per state: free, fragmented, allocated"`
}

// freshSnapshot builds a private snapshot from the store (any server).
func (s *Service) freshSnapshot(ctx context.Context) (*snapshot, error) {
	return buildSnapshot(ctx, s.store, s.cfg.BronzeOvercommit, s.now())
}

func (s *Service) deviceViews(ctx context.Context) ([]DeviceView, stateCounts, *snapshot, error) {
	sn, err := s.freshSnapshot(ctx)
	if err != nil {
		return nil, stateCounts{}, nil, err
	}
	rows, err := s.store.ListAllocations(ctx, "")
	if err != nil {
		return nil, stateCounts{}, nil, err
	}
	type key struct {
		node string
		pos  int
	}
	byDev := map[key][]SliceView{}
	for _, a := range rows {
		if a.DevicePos < 0 {
			continue
		}
		byDev[key{a.NodeID, a.DevicePos}] = append(byDev[key{a.NodeID, a.DevicePos}], SliceView{TaskID: a.TaskID, Attempt: a.Attempt,
			QoS: string(a.QoS), MemoryMiB: a.MemoryMiB, ComputePercent: a.ComputeMilli / 10, Isolation: a.Isolation, Profile: a.Profile,
			Tenant: a.Tenant, Project: a.Project, Priority: a.Priority, Draining: a.Draining})
	}
	out := []DeviceView{}
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
				sl = []SliceView{}
			}
			out = append(out, DeviceView{Node: ni.Node.Name, Hostname: e.node.Hostname, Online: e.state != nodeOffline,
				Vendor: dv.Vendor, Model: dv.Model, Index: dv.Index, UUID: dv.UUID, MemoryMiB: dv.MemoryMiB, AllocatedMiB: mem,
				AllocatedPercent: int(1000-st.FreeMilli) / 10, FreePercent: int(st.FreeMilli) / 10, State: deviceState(st), Slices: sl})
		}
	}
	s.mu.Lock()
	demand := partitionDemandOf(s.shapes.reqs)
	s.mu.Unlock()
	return out, deviceStates(sn, demand), sn, nil
}

// Slices lists every device with its slices and the fragmentation score.
func (s *Service) Slices(ctx context.Context) (SliceList, error) {
	devs, st, _, err := s.deviceViews(ctx)
	if err != nil {
		return SliceList{}, err
	}
	return SliceList{Items: devs, Total: len(devs), FragmentationScore: st.score(),
		Devices: map[string]int{DeviceFree: st.free, DeviceFragmented: st.fragmented, DeviceAllocated: st.allocated}}, nil
}

// ClusterSummary is the dashboard's overview; the wire type is owned by
// apitypes, so a hub reading a member's summary decodes the same struct.
type ClusterSummary = apitypes.ClusterSummary

// Summary is the cluster overview: devices, memory, nodes, tasks per
// state, fragmentation and who leads the scheduler.
func (s *Service) Summary(ctx context.Context) (ClusterSummary, error) {
	var out ClusterSummary
	devs, st, sn, err := s.deviceViews(ctx)
	if err != nil {
		return out, err
	}
	var allocPct, pctTotal int64
	for _, d := range devs {
		out.GPUs.Total++
		if !d.Online {
			continue
		}
		out.GPUs.Online++
		if len(d.Slices) > 0 {
			out.GPUs.Busy++
		}
		out.MemoryMiB.Total += d.MemoryMiB
		out.MemoryMiB.Free += max(d.MemoryMiB-d.AllocatedMiB, 0)
		allocPct += int64(d.AllocatedPercent)
		pctTotal += 100
	}
	out.Nodes.Health = map[string]int{}
	for _, e := range sn.byIdx {
		if e.node.State == controlplane.NodeOnline {
			out.Nodes.Online++
		}
		h := e.node.Health
		if h == "" {
			h = "unknown"
		}
		out.Nodes.Health[h]++
	}
	out.Nodes.Total = len(sn.byIdx)
	out.Tasks = map[string]int{}
	for _, state := range controlplane.AllTaskStates {
		_, n, err := s.store.ListTasks(ctx, controlplane.TaskFilter{States: []controlplane.TaskState{state}, Page: controlplane.Page{Limit: 1}})
		if err != nil {
			return out, err
		}
		out.Tasks[string(state)] = n
	}
	ended := out.Tasks["succeeded"] + out.Tasks["failed"] + out.Tasks["cancelled"] + out.Tasks["timed_out"]
	out.SliceUtilization = ratio(float64(allocPct), float64(pctTotal))
	out.Nodes.OnlineRate = ratio(float64(out.Nodes.Online), float64(out.Nodes.Total))
	out.TaskCompletionRate = ratio(float64(out.Tasks["succeeded"]), float64(ended))
	out.Fragmentation.Score, out.Fragmentation.Free = st.score(), st.free
	out.Fragmentation.Fragmented, out.Fragmentation.Allocated = st.fragmented, st.allocated
	s.mu.Lock()
	out.Scheduler.Leader, out.Scheduler.Holder, out.Scheduler.LastTick = s.leader, s.holder, s.lastTick
	s.mu.Unlock()
	return out, nil
}

// ratio is a/b, or nil (JSON null: unknown is absent, never 0) when b is 0.
func ratio(a, b float64) *float64 {
	if b == 0 {
		return nil
	}
	r := a / b
	return &r
}

// ---- defragmentation ----

// DefragAnswer is the current plan and whether executing it is allowed.
type DefragAnswer struct {
	Plan           DefragPlan       `json:"plan"`
	ExecuteAllowed bool             `json:"execute_allowed"`
	Policy         DefragPolicyView `json:"policy"`
}

// DefragPolicyView is the automatic defragmentation policy as configured.
type DefragPolicyView struct {
	Automatic       bool     `json:"automatic" doc:"The leader runs the policy: allow_defrag and a threshold above 0"`
	Threshold       float64  `json:"threshold" doc:"Fragmentation score (0..1) from which moves start"`
	MaxMovesPerHour int      `json:"max_moves_per_hour" doc:"Most tasks moved in any hour, 0 = no limit"`
	QuietHours      []string `json:"quiet_hours" doc:"Daily windows without automatic moves (HH:MM-HH:MM)"`
	TimeZone        string   `json:"time_zone" doc:"Time zone of the quiet hours"`
	QuietNow        bool     `json:"quiet_now" doc:"The current time is in a quiet window"`
}

func (s *Service) policyView() DefragPolicyView {
	p := s.cfg.Defrag
	v := DefragPolicyView{Automatic: s.cfg.AllowDefrag && p.Threshold > 0, Threshold: p.Threshold, MaxMovesPerHour: p.MaxMovesPerHour,
		QuietHours: []string{}, TimeZone: "UTC", QuietNow: p.quiet(s.now())}
	if p.Location != nil {
		v.TimeZone = p.Location.String()
	}
	for _, w := range p.QuietHours {
		v.QuietHours = append(v.QuietHours, w.String())
	}
	return v
}

// DefragExecuted is an executed plan and the tasks it requeued.
type DefragExecuted struct {
	Plan     DefragPlan `json:"plan"`
	Requeued []int64    `json:"requeued" doc:"Tasks requeued to move"`
}

// PlanDefrag proposes moves of restartable Bronze slices that free whole
// devices (a dry run; any server).
func (s *Service) PlanDefrag(ctx context.Context) (DefragAnswer, error) {
	sn, err := s.freshSnapshot(ctx)
	if err != nil {
		return DefragAnswer{}, err
	}
	s.mu.Lock()
	reqs := append([]model.Request(nil), s.shapes.reqs...)
	s.mu.Unlock()
	return DefragAnswer{Plan: planDefrag(sn, reqs), ExecuteAllowed: s.cfg.AllowDefrag, Policy: s.policyView()}, nil
}

// ExecuteDefrag requeues the plan's moves, when the configuration allows
// it; the scheduler re-places them. Only the leader executes (ErrConflict
// elsewhere).
func (s *Service) ExecuteDefrag(ctx context.Context) (DefragExecuted, error) {
	if !s.cfg.AllowDefrag {
		return DefragExecuted{}, fmt.Errorf("%w: defragmentation moves are disabled by the server configuration (scheduler allow_defrag)", controlplane.ErrForbidden)
	}
	sn, err := s.freshSnapshot(ctx)
	if err != nil {
		return DefragExecuted{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.leader || s.snap == nil {
		return DefragExecuted{}, fmt.Errorf("%w: %v; send it to the leader", controlplane.ErrConflict, errNotLeader)
	}
	p := planDefrag(sn, s.shapes.reqs)
	moved, err := s.executePlanLocked(ctx, &p, s.budgetLocked(ctx, s.now()), "manual")
	if err != nil {
		return DefragExecuted{}, err
	}
	if len(moved) > 0 {
		s.m.defragScore.WithLabelValues("before").Set(p.ScoreBefore)
		s.m.defragScore.WithLabelValues("after_planned").Set(p.ScoreAfter)
	}
	return DefragExecuted{Plan: p, Requeued: moved}, nil
}
