package sim

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/scheduler/framework"
	"github.com/heteroflow/heteroflow/scheduler/model"
	"github.com/heteroflow/heteroflow/scheduler/plugins"
)

// benchPlacement measures decisions on a 5,000-node × 8-device
// heterogeneous cluster with the default profile, one core, in a steady
// state: the cluster is first filled to ~70% of its devices, then every
// placement that pushes allocation over 85% releases the oldest tasks (a
// departure stream), so scores are recomputed for changed nodes as in a
// live cluster. Only Schedule is timed for the latency metrics.
func benchPlacement(b *testing.B, shapes int, memo bool) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	cl, err := model.NewCluster(1.5)
	require.NoError(b, err)
	for _, n := range SyntheticNodes(5000) {
		_, err := cl.AddNode(n)
		require.NoError(b, err)
	}
	prof, err := LoadProfile("default")
	require.NoError(b, err)
	if !memo {
		// An enabled Volatile plugin (Random, weight 0: no score) turns
		// the memo off: every node is evaluated in every cycle. It is
		// switched on at run time after the (memoised) warm-up.
		zero, off := 0.0, false
		prof.Plugins = append(prof.Plugins, framework.PluginConfig{Name: plugins.NameRandom, Weight: &zero, Enabled: &off})
	}
	fw, err := framework.New(plugins.Registry(), prof, cl, framework.Options{Seed: 1})
	require.NoError(b, err)
	tasks := SyntheticShapes(shapes, 200000, 1)
	fr, _ := fw.Plugin(plugins.NameFragmentation)
	require.NoError(b, fr.(*plugins.Fragmentation).ObserveWorkload(tasks[:20000]))
	capacity, _ := cl.Capacity()
	ctx := context.Background()
	var live []string
	next := 0
	schedule := func() (time.Duration, bool) {
		t := tasks[next%len(tasks)]
		t.ID = t.ID + "-" + itoa(next)
		next++
		start := time.Now()
		_, err := fw.Schedule(ctx, &t, framework.ScheduleOptions{})
		d := time.Since(start)
		if err != nil {
			if !errors.Is(err, framework.ErrUnschedulable) {
				b.Fatal(err)
			}
			return d, false
		}
		live = append(live, t.ID)
		for cl.Allocated()*100 > capacity*85 && len(live) > 0 {
			require.NoError(b, cl.Release(live[0]))
			live = live[1:]
		}
		return d, true
	}
	for cl.Allocated()*100 < capacity*70 {
		schedule()
	}
	if !memo {
		require.NoError(b, fw.SetEnabled(plugins.NameRandom, true))
	}
	lat := make([]time.Duration, 0, b.N)
	placed := 0
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d, ok := schedule()
		lat = append(lat, d)
		if ok {
			placed++
		}
	}
	b.StopTimer()
	cpuUsed := cpuTime() - cpu0
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	slices.Sort(lat)
	b.ReportMetric(float64(len(lat))/sum.Seconds(), "decisions/s")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99_ms")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50_us")
	b.ReportMetric(100*float64(placed)/float64(len(lat)), "placed_%")
	// Process CPU time per decision (includes the untimed releases): robust
	// when the machine is shared and wall-clock latencies are inflated.
	b.ReportMetric(float64(len(lat))/cpuUsed.Seconds(), "decisions/cpu-s")
}

// cpuTime is the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func itoa(i int) string {
	var buf [20]byte
	n := len(buf)
	for {
		n--
		buf[n] = byte('0' + i%10)
		i /= 10
		if i == 0 {
			break
		}
	}
	return string(buf[n:])
}

// BenchmarkPlacement5000x8: 300 task shapes (openb has 90–313).
func BenchmarkPlacement5000x8(b *testing.B) { benchPlacement(b, 300, true) }

// BenchmarkPlacement5000x8NoMemo: the same with the memo off — every cycle
// evaluates all 5,000 nodes (the cost a never-seen shape pays).
func BenchmarkPlacement5000x8NoMemo(b *testing.B) { benchPlacement(b, 300, false) }

// BenchmarkOpenbReplay: one full default-trace replay per op (seed 42).
func BenchmarkOpenbReplay(b *testing.B) {
	dir := traceDir()
	nodes, err := LoadNodes(dir + "openb_node_list_gpu_node.csv")
	if err != nil {
		b.Skip("openb trace not present")
	}
	tasks, err := LoadTasks(dir + "openb_pod_list_default.csv")
	require.NoError(b, err)
	prof, err := LoadProfile("default")
	require.NoError(b, err)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_, err := Run(context.Background(), Config{Nodes: nodes, Tasks: tasks, Profile: prof, Tune: 1.3}, 42)
		require.NoError(b, err)
	}
}
