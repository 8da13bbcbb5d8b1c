package storetest

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
)

// BenchmarkCreateTask measures CreateTask (task row + submitted event) from
// `parallelism`×GOMAXPROCS goroutines, as concurrent API handlers would call
// it, and reports throughput and latency percentiles.
func BenchmarkCreateTask(b *testing.B, s controlplane.Store, parallelism int) {
	spec := FullSpec("bench")
	var mu sync.Mutex
	var lat []time.Duration
	b.SetParallelism(parallelism)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		local := make([]time.Duration, 0, 1024)
		for pb.Next() {
			t := &controlplane.Task{Spec: spec, Owner: "bench"}
			t0 := time.Now()
			if err := s.CreateTask(b.Context(), t); err != nil {
				b.Error(err)
				return
			}
			local = append(local, time.Since(t0))
		}
		mu.Lock()
		lat = append(lat, local...)
		mu.Unlock()
	})
	elapsed := time.Since(start)
	b.StopTimer()
	reportLatency(b, lat, elapsed)
}

// BenchmarkTransition measures TransitionTask (guarded update + event) on
// pre-created tasks, submitted → queued, in parallel.
func BenchmarkTransition(b *testing.B, s controlplane.Store, parallelism int) {
	ids := make(chan int64, b.N)
	for i := 0; i < b.N; i++ {
		t := &controlplane.Task{Spec: MinimalSpec(fmt.Sprintf("tr-%d", i))}
		if err := s.CreateTask(b.Context(), t); err != nil {
			b.Fatal(err)
		}
		ids <- t.ID
	}
	close(ids)
	var mu sync.Mutex
	var lat []time.Duration
	b.SetParallelism(parallelism)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		var local []time.Duration
		for pb.Next() {
			id := <-ids
			t0 := time.Now()
			if _, err := s.TransitionTask(b.Context(), controlplane.Transition{TaskID: id,
				From: controlplane.TaskSubmitted, To: controlplane.TaskQueued, Actor: "bench"}); err != nil {
				b.Error(err)
				return
			}
			local = append(local, time.Since(t0))
		}
		mu.Lock()
		lat = append(lat, local...)
		mu.Unlock()
	})
	elapsed := time.Since(start)
	b.StopTimer()
	reportLatency(b, lat, elapsed)
}

func reportLatency(b *testing.B, lat []time.Duration, elapsed time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "ops/s")
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}
