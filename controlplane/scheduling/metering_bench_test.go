//go:build unix

package scheduling

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/metering"
	"github.com/heteroflow/heteroflow/controlplane/postgres/pgtest"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// BenchmarkLiveMetering measures live scheduling throughput — placements
// per second of the real loop's ticks (release, admission, placement and
// the store bind) — with metering passes running against the same store
// ("on") and without them ("off"). One iteration is one second of the
// cluster: 100 new tasks arrive, the loop ticks (timed), every node's
// agent starts and finishes its runs through the store (untimed; a run
// lasts 2–4 s, so slices are released, and metered, all along). 100 nodes
// × 8 H100; tasks of one whole device, a half and a quarter; four tenants.
//
// Metering runs as in production, in its own goroutine: every
// HETEROFLOW_METER_EVERY cluster seconds (default 15, the service's
// default interval) a pass (metering.Service.MeterOnce: released intervals
// → records, the metered mark, held slices' ended days) starts together
// with the tick, so that the two contend for the store. Reported: the
// throughput, the meter's busy time as a share of the ticks' time (its
// cost beside scheduling), the records written. The run fails unless every
// released slice has been metered at the end. Run -count N to alternate
// off and on; HETEROFLOW_TEST_STORE=postgres for PostgreSQL.
//
// loop-placements/s counts the whole cluster second (submissions, tick,
// agents) rather than the ticks alone: pinned to one core, off against on
// is what the meter's CPU costs in throughput where nothing is idle.
//
// "cpu" measures the cost itself rather than its effect on one run's
// wall time, which a shared two-core machine makes noisy: the same
// cluster, but each pass runs alone between two cluster seconds (after
// the agents), and the CPU time spent during the passes is set against
// the CPU time of everything else the loop did — submissions, ticks and
// the agents' store calls. CPU time counts this process (getrusage) and,
// on PostgreSQL, the server backends of this benchmark's connections
// (found by application_name, read from /proc/<pid>/schedstat), so it
// does not depend on what else the machine runs. Reported as
// meter-cpu-%-of-lifecycle (against submissions, ticks and the agents'
// task calls), meter-cpu-%-of-submit+ticks (without the agents),
// meter-cpu-%-of-ticks (the ticks alone, the strictest reading), CPU-µs
// per record and per placement of each phase.
func BenchmarkLiveMetering(b *testing.B) {
	for _, mode := range []string{"off", "on", "cpu"} {
		b.Run(mode, func(b *testing.B) { benchLiveMetering(b, mode) })
	}
}

func benchLiveMetering(b *testing.B, mode string) {
	meter := mode != "off"
	acct := newCPUAccount(b)
	h := newHarness(b, Config{})
	for i := range 100 {
		h.addNode(fmt.Sprintf("n%03d", i), inventory.VendorNVIDIA, "H100", 8, 81920)
	}
	require.NoError(b, h.svc.Tick(h.ctx, true))
	every := 15
	if v := os.Getenv("HETEROFLOW_METER_EVERY"); v != "" {
		var err error
		every, err = strconv.Atoi(v)
		require.NoError(b, err)
	}
	ms, err := metering.New(metering.Options{Store: h.db.(metering.Store), Now: h.clk.Now, Logger: h.svc.log})
	require.NoError(b, err)
	var (
		wg        sync.WaitGroup
		meterBusy time.Duration
		records   int
		passErr   error
	)
	pass := func() {
		start := time.Now()
		in, err := ms.MeterOnce(h.ctx)
		meterBusy += time.Since(start)
		records += len(in)
		if err != nil {
			passErr = err
		}
	}
	shapes := []controlplane.TaskSpec{
		{DeviceCount: 1, ComputePercent: 100, MemoryMiB: 81920},
		{DeviceCount: 1, ComputePercent: 50, MemoryMiB: 40960},
		{DeviceCount: 1, ComputePercent: 25, MemoryMiB: 20480},
	}
	// CPU time per phase ("cpu" mode only; acct.now is a store query on
	// PostgreSQL, kept out of the other modes' timings).
	cpu := map[string]time.Duration{}
	phase := func(name string, f func()) {
		if mode != "cpu" {
			f()
			return
		}
		t := acct.now()
		f()
		cpu[name] += acct.now() - t
	}
	if mode == "cpu" {
		for _, a := range h.nodes {
			a.ownHeartbeats = true // timed apart: per node, not per task
		}
	}
	var tickTime time.Duration
	seq, step := 0, 0
	b.ResetTimer()
	began := time.Now()
	for b.Loop() {
		b.StopTimer()
		phase("submit", func() {
			for range 100 {
				spec := shapes[seq%len(shapes)]
				spec.Name, spec.QoS, spec.Tenant = "m"+strconv.Itoa(seq), controlplane.QoSBronze, "t"+strconv.Itoa(seq%4)
				spec.Labels = map[string]string{"duration": strconv.Itoa(2 + seq%3)}
				h.submit(spec)
				seq++
			}
		})
		step++
		h.clk.Add(time.Second)
		if mode == "on" && step%every == 0 {
			wg.Wait() // the previous pass has ended (one meter, as the lease ensures)
			wg.Go(pass)
		}
		b.StartTimer()
		phase("tick", func() {
			start := time.Now()
			require.NoError(b, h.svc.Tick(h.ctx, true))
			tickTime += time.Since(start)
		})
		b.StopTimer()
		phase("agents", func() {
			for _, id := range h.order {
				h.nodes[id].step()
			}
		})
		if mode == "cpu" {
			phase("heartbeats", func() {
				for _, id := range h.order {
					h.nodes[id].heartbeat()
				}
			})
			if step%every == 0 {
				phase("meter", pass)
			}
		}
		b.StartTimer()
	}
	b.StopTimer()
	wg.Wait()
	loopTime := time.Since(began)
	require.NoError(b, passErr)
	if meter {
		// The meter keeps up: after one more pass no released slice is left.
		pass()
		require.NoError(b, passErr)
		left, err := h.db.(metering.Store).ListUnmeteredIntervals(h.ctx, 1)
		require.NoError(b, err)
		require.Empty(b, left, "every released slice metered")
	}
	placed := testutil.ToFloat64(h.svc.m.binds)
	b.ReportMetric(placed/tickTime.Seconds(), "placements/s")
	// The whole cluster second (submissions, tick, agents, and the meter
	// where it runs): with the process pinned to one core (taskset -c N,
	// -cpu 1) the meter takes its CPU from this, so off against on is
	// its cost in throughput.
	b.ReportMetric(placed/loopTime.Seconds(), "loop-placements/s")
	b.ReportMetric(meterBusy.Seconds()/tickTime.Seconds()*100, "meter-%-of-ticks")
	b.ReportMetric(float64(records), "records")
	if mode == "cpu" {
		// Live scheduling's work for these tasks: submitting them, the
		// ticks (admission, placement, bind, release) and the agent API's
		// calls that start and finish them. Heartbeats are per node, not
		// per task, and are left out of it (reported apart).
		lifecycle := cpu["submit"] + cpu["tick"] + cpu["agents"]
		b.ReportMetric(cpu["meter"].Seconds()/lifecycle.Seconds()*100, "meter-cpu-%-of-lifecycle")
		// Without the agents' calls: submissions and ticks.
		b.ReportMetric(cpu["meter"].Seconds()/(cpu["submit"]+cpu["tick"]).Seconds()*100, "meter-cpu-%-of-submit+ticks")
		// The strictest reading: against the ticks alone.
		b.ReportMetric(cpu["meter"].Seconds()/cpu["tick"].Seconds()*100, "meter-cpu-%-of-ticks")
		b.ReportMetric(float64(cpu["meter"].Microseconds())/float64(max(records, 1)), "meter-cpu-µs/record")
		for _, name := range []string{"submit", "tick", "agents", "heartbeats"} {
			b.ReportMetric(float64(cpu[name].Microseconds())/max(placed, 1), name+"-cpu-µs/placement")
		}
	}
}

// cpuAccount reads the CPU time used by this process and, on PostgreSQL,
// by the server backends that serve it.
type cpuAccount struct {
	b    *testing.B
	conn *pgx.Conn // nil on SQLite
	app  string
}

// newCPUAccount names this process's PostgreSQL connections (the store the
// harness opens next reads the DSN from the environment) so that their
// backends can be found.
func newCPUAccount(b *testing.B) *cpuAccount {
	a := &cpuAccount{b: b}
	if !pgtest.Selected() {
		return a
	}
	u, err := url.Parse(pgtest.DSN(b))
	require.NoError(b, err)
	a.app = "hf-bench-" + strconv.Itoa(os.Getpid())
	q := u.Query()
	q.Set("application_name", a.app)
	u.RawQuery = q.Encode()
	b.Setenv(pgtest.EnvDSN, u.String())
	q.Set("application_name", a.app+"-probe")
	u.RawQuery = q.Encode()
	a.conn, err = pgx.Connect(context.Background(), u.String())
	require.NoError(b, err)
	b.Cleanup(func() { _ = a.conn.Close(context.Background()) })
	return a
}

// now is the CPU time used so far (this process plus its backends that
// are alive: the pool keeps its connections, so none is lost between two
// readings).
func (a *cpuAccount) now() time.Duration {
	var ru syscall.Rusage
	require.NoError(a.b, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	t := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	if a.conn == nil {
		return t
	}
	rows, err := a.conn.Query(context.Background(), "SELECT pid FROM pg_stat_activity WHERE application_name = $1", a.app)
	require.NoError(a.b, err)
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	require.NoError(a.b, err)
	for _, pid := range pids {
		// schedstat: nanoseconds on a CPU, then waiting, then timeslices.
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/schedstat", pid))
		if err != nil {
			continue // the backend exited meanwhile
		}
		var ns int64
		if _, err := fmt.Sscan(string(raw), &ns); err == nil {
			t += time.Duration(ns)
		}
	}
	return t
}
