package metering_test

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/metering"
	"github.com/heteroflow/heteroflow/controlplane/postgres/pgtest"
	"github.com/heteroflow/heteroflow/controlplane/sqlite"
)

// monthOfUsage writes the usage records of a month of 100,000 task attempts
// on 1,000 nodes (8 devices each) into the store, as the meter would: one
// to four slices per attempt, whole devices and shares, all QoS tiers, 20
// tenants × 5 projects × 10 users, runs of 5 minutes to 2 days split at
// midnight. It returns the number of records.
func monthOfUsage(b *testing.B, st metering.Store, month time.Time) int {
	b.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	qos := []controlplane.QoS{controlplane.QoSGold, controlplane.QoSSilver, controlplane.QoSBronze}
	models := []struct{ vendor, model string }{{"nvidia", "H100"}, {"nvidia", "A100"}, {"ascend", "910B"}, {"amd", "MI300X"}, {"hygon", "K100"}}
	var batch []*controlplane.UsageRecord
	n := 0
	flush := func() {
		if _, err := st.RecordUsage(b.Context(), batch, nil); err != nil {
			b.Fatal(err)
		}
		n += len(batch)
		batch = batch[:0]
	}
	id := int64(0)
	for task := int64(1); task <= 100_000; task++ {
		m := models[rng.IntN(len(models))]
		q := qos[rng.IntN(3)]
		bind := month.Add(time.Duration(rng.Int64N(int64(29 * 24 * time.Hour))))
		hold := 5*time.Minute + time.Duration(rng.Int64N(int64(48*time.Hour)))
		if rng.IntN(10) < 8 {
			hold /= 8 // most runs are short
		}
		release := bind.Add(hold)
		tenant := rng.IntN(20)
		node := fmt.Sprintf("node-%04d", rng.IntN(1000))
		milli := []int{1000, 500, 250, 1000}[rng.IntN(4)]
		for dev := range 1 + rng.IntN(4) {
			id++
			iv := &controlplane.AllocationInterval{Allocation: controlplane.Allocation{ID: id, TaskID: task, NodeID: node,
				DevicePos: dev, DeviceIndex: dev, Vendor: m.vendor, Model: m.model, QoS: q, MemoryMiB: int64(milli) * 80,
				ComputeMilli: milli, Tenant: fmt.Sprintf("tenant-%02d", tenant), Project: fmt.Sprintf("p%d", rng.IntN(5)),
				CreatedAt: bind}, OwnerID: int64(tenant*10 + rng.IntN(10) + 1), Owner: fmt.Sprintf("u%d", tenant*10), ReleasedAt: &release}
			batch = append(batch, metering.Split(iv, milli, release, false)...)
		}
		if len(batch) >= 2000 {
			flush()
		}
	}
	flush()
	return n
}

// BenchmarkMonthlyReportPostgres: the monthly report over a month of
// 100,000 tasks on 1,000 nodes, for all tenants and for one tenant.
func BenchmarkMonthlyReportPostgres(b *testing.B) {
	db := pgtest.Open(b)
	month := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	recs := monthOfUsage(b, db, month)
	s, err := metering.New(metering.Options{Store: db, Now: func() time.Time { return month.AddDate(0, 1, 2) }})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%d usage records", recs)
	for _, tenant := range []string{"", "tenant-07"} {
		name := "all-tenants"
		if tenant != "" {
			name = "one-tenant"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				rep, err := s.Report(b.Context(), metering.ReportRequest{Tenant: tenant, Period: metering.PeriodMonth, Start: month})
				if err != nil {
					b.Fatal(err)
				}
				if rep.Total.Usage.SliceMS == 0 {
					b.Fatal("empty report")
				}
			}
		})
	}
}

// BenchmarkMeterPostgres: the metering of released intervals (split,
// records and the metered mark in one transaction), per interval, to set
// against BindTasks per placement (docs/BENCHMARKS.md, Store).
func BenchmarkMeterPostgres(b *testing.B) { benchMeter(b, pgtest.Open(b)) }

// BenchmarkMeterSQLite: the same on SQLite.
func BenchmarkMeterSQLite(b *testing.B) {
	db, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "hf.db"), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	benchMeter(b, db)
}

func benchMeter(b *testing.B, db metering.Store) {
	node := "bench-node"
	tasks := make([]*controlplane.Task, b.N)
	for i := range tasks {
		tk := &controlplane.Task{Spec: controlplane.TaskSpec{Name: fmt.Sprintf("m-%d", i), Command: []string{"/bin/true"}, Tenant: "t"}}
		if err := db.CreateTask(b.Context(), tk); err != nil {
			b.Fatal(err)
		}
		if _, err := db.TransitionTask(b.Context(), controlplane.Transition{TaskID: tk.ID, From: controlplane.TaskSubmitted, To: controlplane.TaskQueued}); err != nil {
			b.Fatal(err)
		}
		if _, err := db.BindTasks(b.Context(), []controlplane.Binding{{Transition: controlplane.Transition{TaskID: tk.ID,
			From: controlplane.TaskQueued, To: controlplane.TaskScheduled, NodeID: &node},
			Allocations: []*controlplane.Allocation{{NodeID: node, Vendor: "nvidia", Model: "H100", MemoryMiB: 81920,
				ComputeMilli: 1000, QoS: controlplane.QoSGold, PartStart: -1, Tenant: "t"}}}}); err != nil {
			b.Fatal(err)
		}
		tasks[i] = tk
	}
	time.Sleep(2 * time.Millisecond) // every interval lasts at least a millisecond, so it has a record
	for _, tk := range tasks {
		if _, err := db.TransitionTask(b.Context(), controlplane.Transition{TaskID: tk.ID, From: controlplane.TaskScheduled, To: controlplane.TaskSucceeded}); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := db.ReleaseStale(b.Context()); err != nil {
		b.Fatal(err)
	}
	s, err := metering.New(metering.Options{Store: db})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	in, err := s.MeterOnce(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if len(in) < b.N {
		b.Fatalf("%d records for %d intervals", len(in), b.N)
	}
}
