package scheduling

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/metering"
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
func BenchmarkLiveMetering(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) { benchLiveMetering(b, on) })
	}
}

func benchLiveMetering(b *testing.B, meter bool) {
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
	var tickTime time.Duration
	seq, step := 0, 0
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		for range 100 {
			spec := shapes[seq%len(shapes)]
			spec.Name, spec.QoS, spec.Tenant = "m"+strconv.Itoa(seq), controlplane.QoSBronze, "t"+strconv.Itoa(seq%4)
			spec.Labels = map[string]string{"duration": strconv.Itoa(2 + seq%3)}
			h.submit(spec)
			seq++
		}
		step++
		h.clk.Add(time.Second)
		if meter && step%every == 0 {
			wg.Wait() // the previous pass has ended (one meter, as the lease ensures)
			wg.Go(pass)
		}
		b.StartTimer()
		start := time.Now()
		require.NoError(b, h.svc.Tick(h.ctx, true))
		tickTime += time.Since(start)
		b.StopTimer()
		for _, id := range h.order {
			h.nodes[id].step()
		}
		b.StartTimer()
	}
	b.StopTimer()
	wg.Wait()
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
	b.ReportMetric(meterBusy.Seconds()/tickTime.Seconds()*100, "meter-%-of-ticks")
	b.ReportMetric(float64(records), "records")
}
