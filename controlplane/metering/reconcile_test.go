package metering_test

import (
	"fmt"
	"math"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/metering"
	"github.com/heteroflow/heteroflow/controlplane/postgres"
	"github.com/heteroflow/heteroflow/controlplane/postgres/pgtest"
	"github.com/heteroflow/heteroflow/controlplane/sqlite"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// clock is a settable clock shared by the store and the services.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Set(s string)   { c.mu.Lock(); c.t = at(s); c.mu.Unlock() }

// replay drives the store the way the scheduler and agents do.
type replay struct {
	t   *testing.T
	db  metering.Store
	clk *clock
	n   string
}

func newReplay(t *testing.T) *replay {
	clk := &clock{t: at("2026-10-31T09:00:00Z")}
	// HETEROFLOW_TEST_STORE=postgres replays on PostgreSQL.
	var db metering.Store
	if pgtest.Selected() {
		db = pgtest.OpenWith(t, postgres.Options{Now: clk.Now})
	} else {
		sdb, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "billing.db"), sqlite.Options{Now: clk.Now})
		require.NoError(t, err)
		t.Cleanup(func() { _ = sdb.Close() })
		db = sdb
	}
	r := &replay{t: t, db: db, clk: clk}
	mem := int64(81920)
	tok := &controlplane.BootstrapToken{Prefix: "tok", TokenHash: "hash", ExpiresAt: clk.Now().Add(time.Hour)}
	require.NoError(t, db.CreateBootstrapToken(t.Context(), tok))
	devs := make([]inventory.Device, 4)
	for i := range devs {
		devs[i] = inventory.Device{Index: i, Model: "H100", MemoryTotalMiB: &mem}
	}
	node := &controlplane.Node{ID: "gpu-1", Hostname: "gpu-1.example", // the id is not the hostname, as at enrolment OS: "linux", Arch: "amd64", APIKeyPrefix: "hfk_gpu1",
		Inventory: []inventory.Snapshot{{Vendor: "nvidia", Devices: devs}}}
	require.NoError(t, db.EnrollNode(t.Context(), "hash", node))
	r.n = node.ID
	return r
}

func (r *replay) user(name, tenant string) *controlplane.User {
	u := &controlplane.User{Username: name, Role: controlplane.RoleUser, PasswordHash: "x", Tenant: tenant}
	require.NoError(r.t, r.db.CreateUser(r.t.Context(), u))
	return u
}

func (r *replay) task(u *controlplane.User, project string, retries int) *controlplane.Task {
	tk := &controlplane.Task{OwnerID: u.ID, Owner: u.Username, Spec: controlplane.TaskSpec{Name: fmt.Sprintf("job-%s-%s", u.Username, project),
		Command: []string{"/bin/true"}, Tenant: u.Tenant, Project: project, MaxRetries: retries}}
	require.NoError(r.t, r.db.CreateTask(r.t.Context(), tk))
	r.move(tk.ID, controlplane.TaskSubmitted, controlplane.TaskQueued, false)
	return tk
}

func (r *replay) move(id int64, from, to controlplane.TaskState, retry bool) {
	_, err := r.db.TransitionTask(r.t.Context(), controlplane.Transition{TaskID: id, From: from, To: to, Actor: "test", Retry: retry})
	require.NoError(r.t, err, "%d: %s → %s", id, from, to)
}

// bind places task on devices with one slice shape.
func (r *replay) bind(tk *controlplane.Task, qos controlplane.QoS, memMiB int64, milli int, devices ...int) {
	node := r.n
	b := controlplane.Binding{Transition: controlplane.Transition{TaskID: tk.ID, From: controlplane.TaskQueued,
		To: controlplane.TaskScheduled, NodeID: &node, Actor: "scheduler"}}
	for _, d := range devices {
		b.Allocations = append(b.Allocations, &controlplane.Allocation{NodeID: node, DevicePos: d, DeviceIndex: d,
			Vendor: "nvidia", Model: "H100", MemoryMiB: memMiB, ComputeMilli: milli, QoS: qos, PartStart: -1,
			Tenant: tk.Spec.Tenant, Project: tk.Spec.Project})
	}
	_, err := r.db.BindTasks(r.t.Context(), []controlplane.Binding{b})
	require.NoError(r.t, err)
	r.move(tk.ID, controlplane.TaskScheduled, controlplane.TaskRunning, false)
}

func (r *replay) sweep() {
	_, err := r.db.ReleaseStale(r.t.Context())
	require.NoError(r.t, err)
}

// TestReconciliation replays a workload with preemption, retries, a
// failure, a timeout, a cancellation and a task still running across
// midnight; then meters it, meters it again on a restarted service and on a
// second server (failover), and checks that the report equals the ledger
// exactly, priced by the book in force on each day.
func TestReconciliation(t *testing.T) {
	t.Parallel()
	r := newReplay(t)
	ctx := t.Context()
	svc := func() *metering.Service {
		s, err := metering.New(metering.Options{Store: r.db, Now: r.clk.Now})
		require.NoError(t, err)
		return s
	}
	s1 := svc()

	// The price book, written the day before: 20/device-hour for any H100,
	// 30 for Gold from Nov 2, Bronze half price.
	any := &controlplane.PriceEntry{Vendor: "nvidia", Model: "H100", From: at("2026-11-01T00:00:00Z"), DeviceHour: 20,
		BronzeDiscountPercent: 50}
	require.NoError(t, s1.CreatePrice(ctx, any, "admin"))
	gold := &controlplane.PriceEntry{Vendor: "nvidia", Model: "H100", QoS: controlplane.QoSGold,
		From: at("2026-11-02T00:00:00Z"), DeviceHour: 30, MemoryGiBHour: 0}
	require.NoError(t, s1.CreatePrice(ctx, gold, "admin"))

	alice, bob, carol := r.user("alice", "acme"), r.user("bob", "acme"), r.user("carol", "beta")
	a := r.task(alice, "vision", 0)
	b := r.task(bob, "nlp", 1)
	c := r.task(carol, "ads", 0)
	d := r.task(alice, "vision", 0)

	// A: Gold, one whole device, 22:00 → 03:00 next day, succeeds.
	r.clk.Set("2026-11-01T22:00:00Z")
	r.bind(a, controlplane.QoSGold, 81920, 1000, 0)
	// B: Silver half device 23:00; preempted 23:30, the agent reports the
	// stop at 23:31.250; placed again 23:45, fails 01:00, retried 01:10,
	// times out 02:10.
	r.clk.Set("2026-11-01T23:00:00Z")
	r.bind(b, controlplane.QoSSilver, 40960, 500, 1)
	r.clk.Set("2026-11-01T23:30:00Z")
	_, err := r.db.RequeueTask(ctx, controlplane.Transition{TaskID: b.ID, From: controlplane.TaskRunning, To: controlplane.TaskQueued,
		Reason: "preempted", Actor: "scheduler"})
	require.NoError(t, err)
	r.sweep() // draining rows stay
	r.clk.Set("2026-11-01T23:31:00.250Z")
	require.NoError(t, r.db.ReleaseAllocations(ctx, controlplane.AllocationKey{TaskID: b.ID, Attempt: 0}))
	r.clk.Set("2026-11-01T23:45:00Z")
	r.bind(b, controlplane.QoSSilver, 40960, 500, 2)
	// D: two Silver quarter devices 23:50, cancelled 00:20.
	r.clk.Set("2026-11-01T23:50:00Z")
	r.bind(d, controlplane.QoSSilver, 20480, 250, 1, 3)
	r.clk.Set("2026-11-02T00:00:00Z")
	// C: Bronze, 30 % compute and 20 GiB, from midnight, still running.
	r.bind(c, controlplane.QoSBronze, 20480, 300, 3)
	r.clk.Set("2026-11-02T00:20:00Z")
	r.move(d.ID, controlplane.TaskRunning, controlplane.TaskCancelled, false)
	r.sweep()
	r.clk.Set("2026-11-02T01:00:00Z")
	r.move(b.ID, controlplane.TaskRunning, controlplane.TaskFailed, false)
	r.sweep()
	r.clk.Set("2026-11-02T01:10:00Z")
	r.move(b.ID, controlplane.TaskFailed, controlplane.TaskQueued, true)
	r.bind(b, controlplane.QoSSilver, 40960, 500, 1)
	r.clk.Set("2026-11-02T02:10:00Z")
	r.move(b.ID, controlplane.TaskRunning, controlplane.TaskTimedOut, false)
	r.sweep()
	r.clk.Set("2026-11-02T03:00:00Z")
	r.move(a.ID, controlplane.TaskRunning, controlplane.TaskSucceeded, false)
	r.sweep()

	// A first metering pass at 04:00 on Nov 3: C's ended days are written.
	r.clk.Set("2026-11-03T04:00:00Z")
	in, err := s1.MeterOnce(ctx)
	require.NoError(t, err)
	require.NotEmpty(t, in)
	// The same service again, a restarted one and a second server: nothing new.
	for i, s := range []*metering.Service{s1, svc(), svc()} {
		again, err := s.MeterOnce(ctx)
		require.NoError(t, err)
		require.Empty(t, again, "pass %d wrote records twice", i)
	}

	// The ledger by hand, per task: slice-hours × share (thousandths).
	h := func(d string) float64 { v, _ := time.ParseDuration(d); return v.Hours() }
	type want struct {
		deviceHours float64
		cost        float64
	}
	// A: 2 h on Nov 1 at 20, 3 h on Nov 2 at Gold's 30.
	wantA := want{5, 2*20 + 3*30}
	// B: share is max(500‰ compute, 40960/81920 memory) = 500‰.
	bNov1 := h("31m0.25s") + h("15m")
	bNov2 := h("1h") + h("1h")
	wantB := want{0.5 * (bNov1 + bNov2), 0.5 * (bNov1 + bNov2) * 20}
	// D: two slices of max(250‰, 20480/81920 = 250‰) for 30 min.
	wantD := want{2 * 0.25 * 0.5, 2 * 0.25 * 0.5 * 20}
	// C: max(300‰, 250‰) = 300‰ from Nov 2 00:00 to now (Nov 3 04:00),
	// Bronze at half price.
	wantC := want{0.3 * 28, 0.3 * 28 * 20 * 0.5}

	rep, err := s1.Report(ctx, metering.ReportRequest{Period: metering.PeriodMonth, Start: at("2026-11-01T00:00:00Z")})
	require.NoError(t, err)
	require.True(t, rep.Provisional)
	byTask := map[int64]metering.ReportLine{}
	for _, l := range rep.TopTasks {
		byTask[l.TaskID] = l
	}
	for _, c := range []struct {
		task *controlplane.Task
		want want
	}{{a, wantA}, {b, wantB}, {c, wantC}, {d, wantD}} {
		got := byTask[c.task.ID]
		require.InDelta(t, c.want.deviceHours, got.Hours.DeviceHours, 1e-9, "task %d", c.task.ID)
		require.InDelta(t, c.want.cost, got.Cost, 0.006, "task %d", c.task.ID)
	}
	total := wantA.deviceHours + wantB.deviceHours + wantC.deviceHours + wantD.deviceHours
	require.InDelta(t, total, rep.Total.Hours.DeviceHours, 1e-9)
	require.InDelta(t, wantA.cost+wantB.cost+wantC.cost+wantD.cost, rep.Total.Cost, 0.006)
	require.Zero(t, rep.UnpricedHours)

	// Exactly the ledger: slice-milliseconds as integers.
	sliceMS := (5*time.Hour + 31*time.Minute + 250*time.Millisecond + 15*time.Minute + 2*time.Hour + // A, B
		2*30*time.Minute + 28*time.Hour).Milliseconds() // D, C
	require.Equal(t, sliceMS, rep.Total.Usage.SliceMS)
	var fromRecords int64
	recs, err := r.db.ListUsage(ctx, controlplane.UsageFilter{From: at("2026-11-01T00:00:00Z"), To: at("2026-12-01T00:00:00Z")})
	require.NoError(t, err)
	for _, x := range recs {
		fromRecords += x.DurationMS
	}
	// The stored records hold everything but C's running day (Nov 3).
	require.Equal(t, sliceMS-4*time.Hour.Milliseconds(), fromRecords)

	// Scopes: a tenant, a project, one user; the day breakdown.
	acme, err := s1.Report(ctx, metering.ReportRequest{Tenant: "acme", Period: metering.PeriodMonth, Start: at("2026-11-10T00:00:00Z")})
	require.NoError(t, err)
	require.InDelta(t, wantA.deviceHours+wantB.deviceHours+wantD.deviceHours, acme.Total.Hours.DeviceHours, 1e-9)
	mine, err := s1.Report(ctx, metering.ReportRequest{OwnerID: alice.ID, Period: metering.PeriodDay, Start: at("2026-11-01T00:00:00Z")})
	require.NoError(t, err)
	require.InDelta(t, 2+0.25*2*(10.0/60), mine.Total.Hours.DeviceHours, 1e-9, "alice on Nov 1: A 2 h, D 10 min")
	week, err := s1.Report(ctx, metering.ReportRequest{Period: metering.PeriodWeek, Start: at("2026-11-04T00:00:00Z")})
	require.NoError(t, err)
	require.Equal(t, "2026-11-02", week.From, "weeks start on Monday")
	require.Len(t, week.Daily, 2)
	require.Equal(t, []string{"2026-11-02", "2026-11-03"}, []string{week.Daily[0].Day, week.Daily[1].Day})

	// Bad input.
	_, err = s1.Report(ctx, metering.ReportRequest{Tenant: "nobody", Period: metering.PeriodMonth, Start: at("2026-11-01T00:00:00Z")})
	require.ErrorIs(t, err, controlplane.ErrNotFound)
	_, err = s1.Report(ctx, metering.ReportRequest{Period: metering.PeriodMonth, Start: at("2026-12-01T00:00:00Z")})
	require.ErrorIs(t, err, controlplane.ErrInvalid)
	_, err = s1.Report(ctx, metering.ReportRequest{Period: "year", Start: at("2026-11-01T00:00:00Z")})
	require.ErrorIs(t, err, controlplane.ErrInvalid)

	// C ends on Dec 1 at 02:00; once metered, November is complete and
	// its statement never changes, whatever happens to prices later.
	r.clk.Set("2026-12-01T02:00:00Z")
	r.move(c.ID, controlplane.TaskRunning, controlplane.TaskSucceeded, false)
	r.sweep()
	_, err = s1.CloseStatement(ctx, "beta", "2026-12", "admin")
	require.ErrorIs(t, err, controlplane.ErrInvalid, "December has not ended")
	st, err := s1.CloseStatement(ctx, "beta", "2026-11", "admin")
	require.NoError(t, err)
	wantNov := 0.3 * (29*24 + 0) * 20 * 0.5 // Nov 2 00:00 → Dec 1 00:00 = 29 days
	require.InDelta(t, wantNov, st.Total, 0.006)
	_, err = s1.CloseStatement(ctx, "beta", "2026-11", "admin")
	require.ErrorIs(t, err, controlplane.ErrConflict)
	_, err = s1.MeterOnce(ctx)
	require.NoError(t, err)
	_, closed, err := s1.Statement(ctx, "beta", "2026-11")
	require.NoError(t, err)
	require.InDelta(t, wantNov, closed.Total.Cost, 0.006)
	dec, err := s1.Report(ctx, metering.ReportRequest{Tenant: "beta", Period: metering.PeriodDay, Start: at("2026-12-01T00:00:00Z")})
	require.NoError(t, err)
	require.InDelta(t, 0.3*2, dec.Total.Hours.DeviceHours, 1e-9, "C's last two hours fall in December")
	require.False(t, math.IsNaN(dec.Total.Cost))
}
