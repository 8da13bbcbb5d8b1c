package storetest

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
)

// BillingStore is a FullStore with the billing persistence.
type BillingStore interface {
	FullStore
	controlplane.BillingStore
}

// BillingOpener returns a fresh, empty BillingStore.
type BillingOpener func(t *testing.T) BillingStore

// RunBilling runs the conformance suite of controlplane.BillingStore.
func RunBilling(t *testing.T, open BillingOpener) {
	groups := []struct {
		name string
		run  func(t *testing.T, open BillingOpener)
	}{
		{"ReleaseKeepsIntervals", testReleaseKeepsIntervals},
		{"RecordUsage", testRecordUsage},
		{"RecordUsageBatch", testRecordUsageBatch},
		{"PriceBook", testPriceBook},
		{"Statements", testStatements},
		{"Budgets", testBudgets},
		{"TenantKnown", testTenantKnown},
		{"UsageSums", testUsageSums},
		{"TopTasksRollup", testTopTasksRollup},
		{"DeviceIntervals", testDeviceIntervals},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			g.run(t, open)
		})
	}
}

// ownedTask is a queued task of user u in tenant t1, project p1.
func ownedTask(t *testing.T, s BillingStore, u *controlplane.User) *controlplane.Task {
	t.Helper()
	task := &controlplane.Task{OwnerID: u.ID, Owner: u.Username, Spec: MinimalSpec(fmt.Sprintf("billed-%d", uniq()))}
	task.Spec.Tenant, task.Spec.Project = "t1", "p1"
	require.NoError(t, s.CreateTask(ctx(t), task))
	return move(t, s, task.ID, controlplane.TaskQueued)
}

func testReleaseKeepsIntervals(t *testing.T, open BillingOpener) {
	s := open(t)
	u := mkUser(t, s, fmt.Sprintf("alice-%d", uniq()), controlplane.RoleUser)
	n := mkNode(t, s, nil)
	failed, pre, live := ownedTask(t, s, u), ownedTask(t, s, u), ownedTask(t, s, u)
	_, err := s.BindTasks(ctx(t), []controlplane.Binding{binding(failed, n.ID, 2), binding(pre, n.ID, 1), binding(live, n.ID, 1)})
	require.NoError(t, err)

	open0, err := s.ListOpenIntervals(ctx(t))
	require.NoError(t, err)
	require.Len(t, open0, 4)
	for _, iv := range open0 {
		require.Nil(t, iv.ReleasedAt)
		require.Equal(t, u.ID, iv.OwnerID)
		require.Equal(t, u.Username, iv.Owner)
	}
	none, err := s.ListUnmeteredIntervals(ctx(t), 0)
	require.NoError(t, err)
	require.Empty(t, none, "nothing is released yet")

	// A failed attempt is released by the sweep; a preempted one drains and
	// is released by key. Both become intervals, each once.
	move(t, s, failed.ID, controlplane.TaskFailed)
	_, err = s.ReleaseStale(ctx(t))
	require.NoError(t, err)
	_, err = s.RequeueTask(ctx(t), controlplane.Transition{TaskID: pre.ID, From: controlplane.TaskScheduled,
		To: controlplane.TaskQueued, Reason: "preempted", Actor: "scheduler"})
	require.NoError(t, err)
	_, err = s.ReleaseStale(ctx(t))
	require.NoError(t, err)
	require.NoError(t, s.ReleaseAllocations(ctx(t), controlplane.AllocationKey{TaskID: pre.ID}))
	require.NoError(t, s.ReleaseAllocations(ctx(t), controlplane.AllocationKey{TaskID: pre.ID}))

	ivs, err := s.ListUnmeteredIntervals(ctx(t), 0)
	require.NoError(t, err)
	require.Len(t, ivs, 3)
	tasks := map[int64]int{}
	for _, iv := range ivs {
		tasks[iv.TaskID]++
		require.NotNil(t, iv.ReleasedAt)
		require.False(t, iv.ReleasedAt.Before(iv.CreatedAt))
		require.Equal(t, u.ID, iv.OwnerID)
		require.Equal(t, u.Username, iv.Owner)
		require.Equal(t, "t1", iv.Tenant)
		require.Equal(t, "nvidia", iv.Vendor)
		require.Equal(t, int64(40960), iv.MemoryMiB)
		require.Equal(t, 500, iv.ComputeMilli)
	}
	require.Equal(t, map[int64]int{failed.ID: 2, pre.ID: 1}, tasks)
	still, err := s.ListOpenIntervals(ctx(t))
	require.NoError(t, err)
	require.Len(t, still, 1)
	require.Equal(t, live.ID, still[0].TaskID)
	lim, err := s.ListUnmeteredIntervals(ctx(t), 2)
	require.NoError(t, err)
	require.Len(t, lim, 2)
}

func usageRec(id int64, day time.Time, tenant string, owner int64) *controlplane.UsageRecord {
	return &controlplane.UsageRecord{IntervalID: id, Day: day, Start: day.Add(time.Hour), End: day.Add(3 * time.Hour),
		DurationMS: 2 * 3600 * 1000, TaskID: id * 10, Attempt: 1, NodeID: "n1", DevicePos: 2, DeviceUUID: "GPU-1",
		Vendor: "nvidia", Model: "H100", QoS: controlplane.QoSSilver, Tenant: tenant, Project: "p", OwnerID: owner,
		Owner: "o", MemoryMiB: 40960, ComputeMilli: 500, ShareMilli: 500}
}

func testRecordUsage(t *testing.T, open BillingOpener) {
	s := open(t)
	u := mkUser(t, s, fmt.Sprintf("bob-%d", uniq()), controlplane.RoleUser)
	n := mkNode(t, s, nil)
	task := ownedTask(t, s, u)
	_, err := s.BindTasks(ctx(t), []controlplane.Binding{binding(task, n.ID, 1)})
	require.NoError(t, err)
	move(t, s, task.ID, controlplane.TaskCancelled)
	_, err = s.ReleaseStale(ctx(t))
	require.NoError(t, err)
	ivs, err := s.ListUnmeteredIntervals(ctx(t), 0)
	require.NoError(t, err)
	require.Len(t, ivs, 1)

	d1 := time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC)
	d2 := d1.AddDate(0, 0, 1)
	recs := []*controlplane.UsageRecord{usageRec(ivs[0].ID, d1, "t1", u.ID), usageRec(ivs[0].ID, d2, "t1", u.ID),
		usageRec(ivs[0].ID+1000, d2, "t2", 0)}
	in, err := s.RecordUsage(ctx(t), recs, []int64{ivs[0].ID})
	require.NoError(t, err)
	require.Len(t, in, 3)
	// Again (a restarted meter, a new leader): nothing is written twice.
	in, err = s.RecordUsage(ctx(t), recs, []int64{ivs[0].ID})
	require.NoError(t, err)
	require.Empty(t, in)
	left, err := s.ListUnmeteredIntervals(ctx(t), 0)
	require.NoError(t, err)
	require.Empty(t, left)

	all, err := s.ListUsage(ctx(t), controlplane.UsageFilter{From: d1, To: d2.AddDate(0, 0, 1)})
	require.NoError(t, err)
	require.Len(t, all, 3)
	got := all[0]
	want := recs[0]
	require.Equal(t, want.Day, got.Day)
	require.True(t, want.Start.Equal(got.Start) && want.End.Equal(got.End))
	got.Start, got.End = want.Start, want.End
	require.Equal(t, want, got)
	require.Equal(t, int64(0), all[2].OwnerID)

	one, err := s.ListUsage(ctx(t), controlplane.UsageFilter{From: d2, To: d2.AddDate(0, 0, 1), Tenant: "t1"})
	require.NoError(t, err)
	require.Len(t, one, 1)
	mine, err := s.ListUsage(ctx(t), controlplane.UsageFilter{From: d1, To: d2.AddDate(0, 0, 1), OwnerID: u.ID})
	require.NoError(t, err)
	require.Len(t, mine, 2)
	byTask, err := s.ListUsage(ctx(t), controlplane.UsageFilter{From: d1, To: d2, TaskID: ivs[0].ID * 10, Project: "p"})
	require.NoError(t, err)
	require.Len(t, byTask, 1)
}

func date(s string) time.Time {
	t, err := time.Parse(controlplane.DateLayout, s)
	if err != nil {
		panic(err)
	}
	return t
}

func testPriceBook(t *testing.T, open BillingOpener) {
	s := open(t)
	nov := &controlplane.PriceEntry{Vendor: "nvidia", Model: "H100", QoS: controlplane.QoSGold, From: date("2026-11-01"),
		To: ptr(date("2026-12-01")), DeviceHour: 20, MemoryGiBHour: 0.1, ComputePercentHour: 0.05, BronzeDiscountPercent: 30,
		CreatedBy: Hostile[0]}
	require.NoError(t, s.CreatePrice(ctx(t), nov))
	require.NotZero(t, nov.ID)
	require.Equal(t, "CNY", nov.Currency)
	dec := &controlplane.PriceEntry{Vendor: "nvidia", Model: "H100", QoS: controlplane.QoSGold, From: date("2026-12-01"), DeviceHour: 18}
	require.NoError(t, s.CreatePrice(ctx(t), dec), "adjacent, not overlapping")
	anyQoS := &controlplane.PriceEntry{Vendor: "nvidia", Model: "H100", From: date("2026-11-15"), DeviceHour: 25}
	require.NoError(t, s.CreatePrice(ctx(t), anyQoS), "another key may cover the same days")

	overlap := &controlplane.PriceEntry{Vendor: "nvidia", Model: "H100", QoS: controlplane.QoSGold, From: date("2026-11-20"),
		To: ptr(date("2026-12-10")), DeviceHour: 1}
	require.ErrorIs(t, s.CreatePrice(ctx(t), overlap), controlplane.ErrInvalid)
	inside := &controlplane.PriceEntry{Vendor: "nvidia", Model: "H100", QoS: controlplane.QoSGold, From: date("2027-01-01"), DeviceHour: 1}
	require.ErrorIs(t, s.CreatePrice(ctx(t), inside), controlplane.ErrInvalid, "the open-ended entry covers it")
	neg := &controlplane.PriceEntry{Vendor: "amd", From: date("2026-11-01"), DeviceHour: -1}
	require.ErrorIs(t, s.CreatePrice(ctx(t), neg), controlplane.ErrInvalid)

	got, err := s.GetPrice(ctx(t), nov.ID)
	require.NoError(t, err)
	require.Equal(t, nov.From, got.From)
	require.Equal(t, *nov.To, *got.To)
	require.Equal(t, 20.0, got.DeviceHour)
	require.Equal(t, 30.0, got.BronzeDiscountPercent)
	require.Equal(t, Hostile[0], got.CreatedBy)
	gotDec, err := s.GetPrice(ctx(t), dec.ID)
	require.NoError(t, err)
	require.Nil(t, gotDec.To)

	list, err := s.ListPrices(ctx(t))
	require.NoError(t, err)
	require.Len(t, list, 3)
	require.Equal(t, []int64{anyQoS.ID, nov.ID, dec.ID}, []int64{list[0].ID, list[1].ID, list[2].ID}, "by vendor, model, qos, date")

	// Moving December's start into November overlaps; ending it is fine.
	dec.From = date("2026-11-25")
	require.ErrorIs(t, s.UpdatePrice(ctx(t), dec), controlplane.ErrInvalid)
	dec.From, dec.To = date("2026-12-01"), ptr(date("2027-01-01"))
	require.NoError(t, s.UpdatePrice(ctx(t), dec))
	require.NoError(t, s.CreatePrice(ctx(t), inside), "fits after December ends")
	missing := *dec
	missing.ID, missing.Vendor = 1<<40, "amd"
	require.ErrorIs(t, s.UpdatePrice(ctx(t), &missing), controlplane.ErrNotFound)

	require.NoError(t, s.DeletePrice(ctx(t), inside.ID))
	require.ErrorIs(t, s.DeletePrice(ctx(t), inside.ID), controlplane.ErrNotFound)
	_, err = s.GetPrice(ctx(t), inside.ID)
	require.ErrorIs(t, err, controlplane.ErrNotFound)
}

func testStatements(t *testing.T, open BillingOpener) {
	s := open(t)
	body, err := json.Marshal(map[string]any{"total": 12.5, "name": Hostile[4]})
	require.NoError(t, err)
	st := &controlplane.Statement{Tenant: "t1", Month: "2026-10", Currency: "CNY", Total: 12.5, Report: body, ClosedBy: "admin"}
	require.NoError(t, s.CreateStatement(ctx(t), st))
	require.NotZero(t, st.ID)
	again := &controlplane.Statement{Tenant: "t1", Month: "2026-10", Currency: "CNY", Total: 99, Report: body}
	require.ErrorIs(t, s.CreateStatement(ctx(t), again), controlplane.ErrConflict, "closed once, never changed")
	require.NoError(t, s.CreateStatement(ctx(t), &controlplane.Statement{Tenant: "t2", Month: "2026-10", Currency: "CNY", Report: body}))
	require.NoError(t, s.CreateStatement(ctx(t), &controlplane.Statement{Tenant: "t1", Month: "2026-09", Currency: "CNY", Report: body}))

	got, err := s.GetStatement(ctx(t), "t1", "2026-10")
	require.NoError(t, err)
	require.Equal(t, 12.5, got.Total)
	require.JSONEq(t, string(body), string(got.Report))
	require.Equal(t, "admin", got.ClosedBy)
	_, err = s.GetStatement(ctx(t), "t1", "2026-08")
	require.ErrorIs(t, err, controlplane.ErrNotFound)

	t1, err := s.ListStatements(ctx(t), "t1")
	require.NoError(t, err)
	require.Len(t, t1, 2)
	require.Equal(t, "2026-10", t1[0].Month)
	all, err := s.ListStatements(ctx(t), "")
	require.NoError(t, err)
	require.Len(t, all, 3)
}

func testBudgets(t *testing.T, open BillingOpener) {
	s := open(t)
	b := &controlplane.Budget{Tenant: "t1", Amount: 1000}
	require.NoError(t, s.PutBudget(ctx(t), b))
	require.NotZero(t, b.ID)
	require.Equal(t, "CNY", b.Currency)
	p := &controlplane.Budget{Tenant: "t1", Project: "p1", Amount: 100, HardStop: "refuse"}
	require.NoError(t, s.PutBudget(ctx(t), p))
	upd := &controlplane.Budget{Tenant: "t1", Amount: 2000, HardStop: "queue"}
	require.NoError(t, s.PutBudget(ctx(t), upd))
	require.Equal(t, b.ID, upd.ID, "one budget per tenant and project")
	require.ErrorIs(t, s.PutBudget(ctx(t), &controlplane.Budget{Tenant: "t1", Amount: -5}), controlplane.ErrInvalid)
	require.ErrorIs(t, s.PutBudget(ctx(t), &controlplane.Budget{Tenant: "t1", Amount: 5, HardStop: "explode"}), controlplane.ErrInvalid)

	list, err := s.ListBudgets(ctx(t))
	require.NoError(t, err)
	require.Len(t, list, 2)
	require.Equal(t, 2000.0, list[0].Amount)
	require.Equal(t, "queue", list[0].HardStop)
	require.Equal(t, "p1", list[1].Project)
	require.NoError(t, s.DeleteBudget(ctx(t), p.ID))
	require.ErrorIs(t, s.DeleteBudget(ctx(t), p.ID), controlplane.ErrNotFound)
}

func testTenantKnown(t *testing.T, open BillingOpener) {
	s := open(t)
	tenant := fmt.Sprintf("acme-%d", uniq())
	ok, err := s.TenantKnown(ctx(t), tenant)
	require.NoError(t, err)
	require.False(t, ok)
	mkTask(t, s, 0, func(sp *controlplane.TaskSpec) { sp.Tenant = tenant })
	ok, err = s.TenantKnown(ctx(t), tenant)
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, s.PutBudget(ctx(t), &controlplane.Budget{Tenant: "budget-only", Amount: 1}))
	ok, err = s.TenantKnown(ctx(t), "budget-only")
	require.NoError(t, err)
	require.True(t, ok)
	// A tenant created through the tenants API, before anyone uses it.
	if ts, isTenants := any(s).(controlplane.TenantStore); isTenants {
		require.NoError(t, ts.CreateTenant(ctx(t), &controlplane.Tenant{Name: "created-only"}))
		ok, err = s.TenantKnown(ctx(t), "created-only")
		require.NoError(t, err)
		require.True(t, ok)
	}
}
