package metering_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/metering"
	"github.com/heteroflow/heteroflow/controlplane/metricstore"
)

// deviceLoad is what one device of the replay's node reports, constant.
type deviceLoad struct {
	index   int
	util    float64 // 0-1
	usedMiB int64
}

// pushDeviceMetrics writes the node's device metrics every 15 s over
// [from, to] into the embedded TSDB through its OTLP receiver, as the
// agent's collector sends the vendor receivers' hw.gpu.* metrics.
func pushDeviceMetrics(t *testing.T, store *metricstore.Store, host string, from, to time.Time, devs []deviceLoad) {
	t.Helper()
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr("service.name", "heteroflow-agent")
	rm.Resource().Attributes().PutStr("host.name", host)
	sm := rm.ScopeMetrics().AppendEmpty()
	util := sm.Metrics().AppendEmpty()
	util.SetName("hw.gpu.utilization")
	util.SetUnit("1")
	mem := sm.Metrics().AppendEmpty()
	mem.SetName("hw.gpu.memory.usage")
	mem.SetUnit("By")
	ug, mg := util.SetEmptyGauge(), mem.SetEmptyGauge()
	for ts := from; !ts.After(to); ts = ts.Add(15 * time.Second) {
		for _, d := range devs {
			for _, dp := range []pmetric.NumberDataPoint{ug.DataPoints().AppendEmpty(), mg.DataPoints().AppendEmpty()} {
				dp.SetTimestamp(pcommon.NewTimestampFromTime(ts))
				dp.Attributes().PutStr("hw.id", "GPU-"+strconv.Itoa(d.index))
				dp.Attributes().PutStr("hw.type", "gpu")
				dp.Attributes().PutStr("hw.vendor", "nvidia")
				dp.Attributes().PutStr("hw.model", "H100")
				dp.Attributes().PutStr("hw.index", strconv.Itoa(d.index))
			}
			ug.DataPoints().At(ug.DataPoints().Len() - 1).SetDoubleValue(d.util)
			mg.DataPoints().At(mg.DataPoints().Len() - 1).SetIntValue(d.usedMiB << 20)
		}
	}
	raw, err := pmetricotlp.NewExportRequestFromMetrics(md).MarshalProto()
	require.NoError(t, err)
	req := httptest.NewRequest(http.MethodPost, "/api/v1/otlp/v1/metrics", bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/x-protobuf")
	rec := httptest.NewRecorder()
	store.OTLPHandler().ServeHTTP(rec, req)
	body, _ := io.ReadAll(rec.Body)
	require.Equal(t, http.StatusOK, rec.Code, string(body))
}

// failingQuerier stands for a metrics store that is down.
type failingQuerier struct{}

func (failingQuerier) Instant(_ context.Context, _ string, _ time.Time) (model.Vector, error) {
	return nil, errors.New("metrics store unavailable")
}

func setClock(c *clock, t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

// TestMeasuredUsage replays a workload on one node whose devices report
// utilisation and memory into the embedded TSDB: whole, shared (two halves
// overlapping), preempted and retried quarter, and a failing task retried
// on a device without metrics. Measured usage is attributed exactly, never
// exceeds what was allocated, is stored with the records and shown as
// efficiency per task, user, project and tenant; a later report reads the
// stored figures (the metrics store may be down) and does not change.
func TestMeasuredUsage(t *testing.T) {
	t.Parallel()
	cfg := metricstore.Defaults()
	cfg.Dir = t.TempDir()
	ms, err := metricstore.Open(cfg, metricstore.Options{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = ms.Close() })

	r := newReplay(t)
	ctx := t.Context()
	t0 := controlplane.Day(time.Now()).AddDate(0, 0, -1).Add(2 * time.Hour) // yesterday 02:00 UTC
	m := func(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }
	// host_name is the node's id, as the agent's collector sets it.
	pushDeviceMetrics(t, ms, "gpu-1", m(-5), m(100), []deviceLoad{{0, 0.6, 40960}, {1, 0.9, 61440}, {2, 0.2, 10240}})

	alice, bob, carol := r.user("alice", "acme"), r.user("bob", "acme"), r.user("carol", "beta")
	a, b, c := r.task(alice, "vision", 0), r.task(bob, "nlp", 0), r.task(carol, "ads", 0)
	d, e := r.task(alice, "vision", 0), r.task(carol, "ads", 1)

	setClock(r.clk, m(0))
	r.bind(a, controlplane.QoSGold, 81920, 1000, 0)  // A: whole device 0, 60 min
	r.bind(b, controlplane.QoSSilver, 40960, 500, 1) // B: half of device 1, 60 min
	r.bind(d, controlplane.QoSBronze, 20480, 250, 2) // D: quarter of device 2, preempted at 20 min
	setClock(r.clk, m(10))
	r.bind(e, controlplane.QoSSilver, 40960, 500, 3) // E: device 3 (no metrics), fails at 50, retried
	setClock(r.clk, m(20))
	_, err = r.db.RequeueTask(ctx, controlplane.Transition{TaskID: d.ID, From: controlplane.TaskRunning, To: controlplane.TaskQueued,
		Reason: "preempted", Actor: "scheduler"})
	require.NoError(t, err)
	r.sweep()
	setClock(r.clk, m(21)) // the agent reports the stop a minute later
	require.NoError(t, r.db.ReleaseAllocations(ctx, controlplane.AllocationKey{TaskID: d.ID, Attempt: 0}))
	setClock(r.clk, m(30))
	r.bind(c, controlplane.QoSSilver, 40960, 500, 1) // C: the other half of device 1, 30 → 90 min
	setClock(r.clk, m(40))
	r.bind(d, controlplane.QoSBronze, 20480, 250, 2) // D again, 40 → 70 min
	setClock(r.clk, m(50))
	r.move(e.ID, controlplane.TaskRunning, controlplane.TaskFailed, false)
	r.sweep()
	setClock(r.clk, m(55))
	r.move(e.ID, controlplane.TaskFailed, controlplane.TaskQueued, true)
	r.bind(e, controlplane.QoSSilver, 40960, 500, 3)
	setClock(r.clk, m(60))
	r.move(a.ID, controlplane.TaskRunning, controlplane.TaskSucceeded, false)
	r.move(b.ID, controlplane.TaskRunning, controlplane.TaskSucceeded, false)
	r.sweep()
	setClock(r.clk, m(70))
	r.move(d.ID, controlplane.TaskRunning, controlplane.TaskSucceeded, false)
	r.sweep()
	setClock(r.clk, m(80))
	r.move(e.ID, controlplane.TaskRunning, controlplane.TaskFailed, false)
	r.sweep()
	setClock(r.clk, m(90))
	r.move(c.ID, controlplane.TaskRunning, controlplane.TaskSucceeded, false)
	r.sweep()

	svc, err := metering.New(metering.Options{Store: r.db, Now: r.clk.Now, Querier: ms.Querier()})
	require.NoError(t, err)
	// Released 30 s ago: its last metrics may not have arrived; it waits.
	setClock(r.clk, m(90).Add(30*time.Second))
	in, err := svc.MeterOnce(ctx)
	require.NoError(t, err)
	for _, rec := range in {
		require.NotEqual(t, c.ID, rec.TaskID, "metered before its metrics settled")
	}
	setClock(r.clk, m(95))
	more, err := svc.MeterOnce(ctx)
	require.NoError(t, err)
	in = append(in, more...)
	require.Len(t, in, 7, "A, B, C, D twice, E twice")

	recs, err := r.db.ListUsage(ctx, controlplane.UsageFilter{From: controlplane.Day(t0), To: controlplane.Day(t0).AddDate(0, 0, 1)})
	require.NoError(t, err)
	require.Len(t, recs, 7)
	const min = int64(60 * 1000)
	type fig struct{ ms, compute, mem int64 }
	got := map[int64]fig{}
	for _, rec := range recs {
		// Measured usage never exceeds allocated.
		require.LessOrEqual(t, rec.Measured.MS, rec.DurationMS)
		require.LessOrEqual(t, rec.Measured.ComputeMilliMS, int64(rec.ComputeMilli)*rec.DurationMS, "task %d", rec.TaskID)
		require.LessOrEqual(t, rec.Measured.MemoryMiBMS, rec.MemoryMiB*rec.DurationMS, "task %d", rec.TaskID)
		f := got[rec.TaskID]
		got[rec.TaskID] = fig{f.ms + rec.Measured.MS, f.compute + rec.Measured.ComputeMilliMS, f.mem + rec.Measured.MemoryMiBMS}
	}
	// A alone on device 0: 60 % of it, 40 GiB.
	require.Equal(t, fig{60 * min, 600 * 60 * min, 40960 * 60 * min}, got[a.ID])
	// B and C share device 1 (90 %, 60 GiB) for 30 min: half each; alone
	// they are credited with at most their half.
	require.Equal(t, fig{60 * min, (500*30 + 450*30) * min, (40960*30 + 30720*30) * min}, got[b.ID])
	require.Equal(t, got[b.ID], got[c.ID])
	// D's two attempts on device 2 (20 %, 10 GiB), 21 + 30 min.
	require.Equal(t, fig{51 * min, 200 * 51 * min, 10240 * 51 * min}, got[d.ID])
	// E's device reports nothing: not measured.
	require.Equal(t, fig{}, got[e.ID])

	rep, err := svc.Report(ctx, metering.ReportRequest{Period: metering.PeriodDay, Start: t0, TopTasks: 10})
	require.NoError(t, err)
	var ledger int64
	for _, rec := range recs {
		ledger += rec.DurationMS
	}
	require.Equal(t, ledger, rep.Total.Usage.SliceMS, "the report equals the ledger")
	require.Equal(t, int64((60+60+60+51+40+25)*min), ledger)
	eff := map[int64]*metering.Efficiency{}
	for _, l := range rep.TopTasks {
		eff[l.TaskID] = l.Efficiency
	}
	require.InDelta(t, 0.6, eff[a.ID].Compute, 1e-9)
	require.InDelta(t, 0.5, eff[a.ID].Memory, 1e-9)
	require.InDelta(t, 0.95, eff[b.ID].Compute, 1e-9)
	require.InDelta(t, 0.8, eff[d.ID].Compute, 1e-9)
	require.InDelta(t, 0.5, eff[d.ID].Memory, 1e-9)
	require.Nil(t, eff[e.ID], "not measured: no efficiency")
	for _, l := range append(append(append([]metering.ReportLine{rep.Total}, rep.ByTenant...), rep.ByProject...), rep.ByUser...) {
		if l.Tenant == "beta" && l.User == "" && l.Project == "" {
			// C measured, E not: over the measured part only.
			require.InDelta(t, 0.95, l.Efficiency.Compute, 1e-9)
		}
		if l.Efficiency != nil {
			require.LessOrEqual(t, l.Efficiency.Compute, 1.0)
			require.LessOrEqual(t, l.Efficiency.Memory, 1.0)
		}
	}
	var alices *metering.ReportLine
	for i := range rep.ByUser {
		if rep.ByUser[i].User == "alice" {
			alices = &rep.ByUser[i]
		}
	}
	require.NotNil(t, alices)
	// alice: A (600 of 1000 over 60 min) and D (200 of 250 over 51 min).
	require.InDelta(t, float64(600*60+200*51)/float64(1000*60+250*51), alices.Efficiency.Compute, 1e-9)

	// Later, with the metrics store down, the report is the same.
	down, err := metering.New(metering.Options{Store: r.db, Now: r.clk.Now, Querier: failingQuerier{}})
	require.NoError(t, err)
	again, err := down.Report(ctx, metering.ReportRequest{Period: metering.PeriodDay, Start: t0, TopTasks: 10})
	require.NoError(t, err)
	again.GeneratedAt = rep.GeneratedAt
	require.Equal(t, rep, again)
}
