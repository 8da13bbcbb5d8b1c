package client

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/heteroflow/heteroflow/controlplane/apitypes"
)

// BenchResult summarises a submission benchmark.
type BenchResult struct {
	Submitted   int           `json:"submitted"`
	Errors      int           `json:"errors"`
	FirstError  string        `json:"first_error,omitempty"`
	Elapsed     time.Duration `json:"elapsed_ns"`
	PerSecond   float64       `json:"per_second"`
	P50         time.Duration `json:"p50_ns"`
	P99         time.Duration `json:"p99_ns"`
	Max         time.Duration `json:"max_ns"`
	Concurrency int           `json:"concurrency"`
}

func (r BenchResult) String() string {
	return fmt.Sprintf("%d submitted, %d errors in %s with %d workers: %.0f/s, p50 %s, p99 %s, max %s",
		r.Submitted, r.Errors, r.Elapsed.Round(time.Millisecond), r.Concurrency, r.PerSecond,
		r.P50.Round(10*time.Microsecond), r.P99.Round(10*time.Microsecond), r.Max.Round(10*time.Microsecond))
}

// BenchSubmit submits minimal tasks from concurrency workers for d and
// measures each request's latency. base and apiKey name the server and a
// key with task write permission.
func BenchSubmit(ctx context.Context, base, apiKey string, concurrency int, d time.Duration) (BenchResult, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return benchSubmit(ctx, base, apiKey, concurrency, -1)
}

// BenchSubmitN submits exactly n tasks from concurrency workers (for go test -bench).
func BenchSubmitN(ctx context.Context, base, apiKey string, concurrency, n int) (BenchResult, error) {
	return benchSubmit(ctx, base, apiKey, concurrency, n)
}

// benchSubmit runs until ctx ends, or n submissions when n ≥ 0.
func benchSubmit(ctx context.Context, base, apiKey string, concurrency, n int) (BenchResult, error) {
	if concurrency < 1 {
		return BenchResult{}, fmt.Errorf("concurrency must be at least 1")
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = concurrency
	tr.MaxConnsPerHost = concurrency
	hc := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	c, err := New(base, hc)
	if err != nil {
		return BenchResult{}, err
	}
	c.WithAPIKey(apiKey)
	if _, err := c.SubmitTask(context.WithoutCancel(ctx), benchSpec(0)); err != nil { // fail fast on bad credentials
		return BenchResult{}, fmt.Errorf("first submission failed: %w", err)
	}
	var (
		mu       sync.Mutex
		lat      = make([]time.Duration, 0, max(n, 0))
		errs     int
		firstErr string
		wg       sync.WaitGroup
		left     = int64(n)
	)
	take := func() bool {
		if n < 0 {
			return ctx.Err() == nil
		}
		mu.Lock()
		defer mu.Unlock()
		left--
		return left >= 0
	}
	start := time.Now()
	for w := range concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := make([]time.Duration, 0, 4096)
			var localErrs int
			var fe string
			for i := 1; take(); i++ {
				t0 := time.Now()
				_, err := c.SubmitTask(ctx, benchSpec(w*1_000_000+i))
				if n < 0 && ctx.Err() != nil {
					break // the deadline cut this request short; don't count it
				}
				if err != nil {
					localErrs++
					if fe == "" {
						fe = err.Error()
					}
					continue
				}
				local = append(local, time.Since(t0))
			}
			mu.Lock()
			lat = append(lat, local...)
			errs += localErrs
			if firstErr == "" {
				firstErr = fe
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	slices.Sort(lat)
	r := BenchResult{Submitted: len(lat), Errors: errs, FirstError: firstErr, Elapsed: elapsed, Concurrency: concurrency,
		PerSecond: float64(len(lat)) / elapsed.Seconds()}
	if k := len(lat); k > 0 {
		r.P50, r.P99, r.Max = lat[k/2], lat[min(k-1, k*99/100)], lat[k-1]
	}
	return r, nil
}

func benchSpec(i int) apitypes.TaskSpecJSON {
	return apitypes.TaskSpecJSON{Name: fmt.Sprintf("bench-%d", i), Command: []string{"true"}, DeviceCount: 1,
		MemoryMiB: 1024, ComputePercent: 25, QoS: "silver", Labels: map[string]string{"bench": "submit"}}
}
