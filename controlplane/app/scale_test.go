//go:build unix

package app

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/postgres/pgtest"
	"github.com/heteroflow/heteroflow/controlplane/server"
	"github.com/heteroflow/heteroflow/receivers/inventory"
	"github.com/heteroflow/heteroflow/scheduler/model"
	"github.com/heteroflow/heteroflow/scheduler/sim"
)

// The live loop at scale (run by hand, not in `make test`: it takes
// minutes and the whole machine):
//
//	HETEROFLOW_SCALE_NODES=1000 HETEROFLOW_SCALE_TASKS=10000 \
//	HETEROFLOW_TEST_PG_DSN=postgres://postgres@127.0.0.1:5432/test?sslmode=disable \
//	go test -run TestLiveLoopAtScale -v -timeout 30m ./controlplane/app/
//
// HETEROFLOW_SCALE_PROFILE=cpu.pprof writes a CPU profile of the run;
// HETEROFLOW_SCALE_CLIENTS sets how many clients submit at once (default
// 16); HETEROFLOW_SCALE_TRACE=<openb pod list> draws the tasks from a
// trace's GPU pods instead of the built-in mix (see traceMix).
// The assembled server on PostgreSQL; nodes × 8 H100 enrolled through the
// store and heartbeating every 10 s through it (what the agent API's
// handlers call); tasks posted over HTTP by the clients, each sending its
// next task as soon as the API answers the last; a task list call every 100 ms during the run. Bound = the
// queued → scheduled transition committed (ledger rows + run assignment),
// measured from the task's creation, both stamped by the store's clock.
// The test checks correctness only (every task bound once, the ledger
// holds exactly one placement per task); the figures are logged.
const (
	envScaleNodes   = "HETEROFLOW_SCALE_NODES"
	envScaleTasks   = "HETEROFLOW_SCALE_TASKS"
	envScaleProfile = "HETEROFLOW_SCALE_PROFILE"
	envScaleClients = "HETEROFLOW_SCALE_CLIENTS"
	envScaleTrace   = "HETEROFLOW_SCALE_TRACE"
)

func TestLiveLoopAtScale(t *testing.T) {
	nodes, _ := strconv.Atoi(os.Getenv(envScaleNodes))
	if nodes <= 0 {
		t.Skip(envScaleNodes + " is not set; the scale run is started by hand")
	}
	tasks, _ := strconv.Atoi(os.Getenv(envScaleTasks))
	if tasks <= 0 {
		tasks = 10000
	}
	clients := 16
	if v := os.Getenv(envScaleClients); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(t, err, envScaleClients)
		require.Positive(t, n, envScaleClients)
		clients = n
	}
	mix, mixName := scaleSpec, "built-in (mean 0.525 devices per task)"
	if path := os.Getenv(envScaleTrace); path != "" {
		mix, mixName = traceMix(t, path, tasks, nodes*8)
	}
	dsn := pgtest.Schema(t)
	s := startServerWith(t, t.TempDir(), func(c *server.Config) { c.DB = dsn })
	admin := s.adminToken()
	st, ok := s.app.Server().Store().(controlplane.NodeStore)
	require.True(t, ok)
	ctx := t.Context()

	began := time.Now()
	enrollScaleNodes(t, st, nodes)
	t.Logf("enrolled %d nodes × 8 devices in %v", nodes, time.Since(began).Round(time.Millisecond))
	hbCtx, stopHB := context.WithCancel(ctx)
	defer stopHB()
	go heartbeatScaleNodes(hbCtx, st, nodes, 10*time.Second)
	waitSchedulerSees(t, s, admin, nodes*8)

	if p := os.Getenv(envScaleProfile); p != "" {
		f, err := os.Create(p)
		require.NoError(t, err)
		require.NoError(t, pprof.StartCPUProfile(f))
		defer func() { pprof.StopCPUProfile(); _ = f.Close() }()
	}

	// The list probe: what the console polls while the queue drains.
	var listMu sync.Mutex
	var listLat []time.Duration
	probeCtx, stopProbe := context.WithCancel(ctx)
	probeDone := make(chan struct{})
	go func() {
		defer close(probeDone)
		for probeCtx.Err() == nil {
			t0 := time.Now()
			if r := s.try(http.MethodGet, "/api/v1/tasks?limit=50", admin); r != http.StatusOK {
				t.Errorf("task list: HTTP %d", r)
				return
			}
			listMu.Lock()
			listLat = append(listLat, time.Since(t0))
			listMu.Unlock()
			select {
			case <-probeCtx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()

	loadBefore, cpuBefore := loadAverage(), processCPU()
	start := time.Now()
	submitLat := submitScaleTasks(t, s, admin, tasks, clients, mix)
	submitted := time.Since(start)
	waitAllBound(t, dsn, tasks, 5*time.Minute)
	wall := time.Since(start)
	cpu := processCPU() - cpuBefore
	stopProbe()
	<-probeDone

	bound, first, last := boundLatencies(t, dsn)
	require.Len(t, bound, tasks, "every task bound exactly once")
	var allocated int
	require.NoError(t, withConn(t, dsn, func(c *pgx.Conn) error {
		return c.QueryRow(ctx, `SELECT count(DISTINCT task_id) FROM allocations`).Scan(&allocated)
	}))
	require.Equal(t, tasks, allocated, "the ledger holds one placement per task")

	listMu.Lock()
	defer listMu.Unlock()
	t.Logf("scale run: %d nodes × 8, %d tasks, %d clients, GOMAXPROCS %d; task mix %s", nodes, tasks, clients,
		runtime.GOMAXPROCS(0), mixName)
	t.Logf("submissions: %v for %d (%.0f/s), HTTP p50 %v p99 %v", submitted.Round(time.Millisecond), tasks,
		float64(tasks)/submitted.Seconds(), pct(submitLat, 50), pct(submitLat, 99))
	t.Logf("submit→bound: p1 %v p50 %v p99 %v max %v", pct(bound, 1), pct(bound, 50), pct(bound, 99), pct(bound, 100))
	t.Logf("placements/s end to end: %.0f (first submit → last bind %v); binding window %v (%.0f/s)",
		float64(tasks)/wall.Seconds(), wall.Round(time.Millisecond), last.Sub(first).Round(time.Millisecond),
		float64(tasks)/max(last.Sub(first).Seconds(), 1e-3))
	t.Logf("task list during the run: %d calls, p50 %v p99 %v max %v", len(listLat), pct(listLat, 50), pct(listLat, 99), pct(listLat, 100))
	// The machine's load beside the figures: on a shared machine the wall
	// clock measures the neighbours too; the process's CPU (server, load
	// generator and simulated heartbeats) per task does not.
	t.Logf("load average %s before, %s after; this process used %.2f CPU-s (%.0f µs per task, %.0f%% of one core)",
		loadBefore, loadAverage(), cpu.Seconds(), float64(cpu.Microseconds())/float64(tasks), 100*cpu.Seconds()/wall.Seconds())
}

// loadAverage is the 1, 5 and 15 minute load average ("" where unknown).
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// processCPU is the user + system CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// try sends a GET and returns the status, reading the body through.
func (s *testServer) try(method, path, cred string) int {
	r := s.do(method, path, cred, nil)
	return r.Status
}

func enrollScaleNodes(t *testing.T, st controlplane.NodeStore, n int) {
	ctx := t.Context()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	next := atomic.Int64{}
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				id := fmt.Sprintf("scale-%05d", i)
				tok := &controlplane.BootstrapToken{Prefix: id, TokenHash: "hash-" + id, ExpiresAt: time.Now().Add(time.Hour)}
				if err := st.CreateBootstrapToken(ctx, tok); err != nil {
					errs <- err
					return
				}
				node := &controlplane.Node{ID: id, Hostname: id + ".lab", State: controlplane.NodeOnline, CPUCount: 128,
					MemoryTotalMiB: 1 << 20, Inventory: scaleInventory(id)}
				if err := st.EnrollNode(ctx, tok.TokenHash, node); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	require.NoError(t, <-errs)
	require.NoError(t, heartbeatOnce(ctx, st, 0, n))
}

func scaleInventory(id string) []inventory.Snapshot {
	snap := inventory.Snapshot{Vendor: inventory.VendorNVIDIA}
	for i := range 8 {
		mem := int64(81559)
		uuid := fmt.Sprintf("GPU-%s-%d", id, i)
		snap.Devices = append(snap.Devices, inventory.Device{Index: i, UUID: &uuid, Model: "NVIDIA H100 80GB HBM3", MemoryTotalMiB: &mem})
	}
	return []inventory.Snapshot{snap}
}

func heartbeatOnce(ctx context.Context, st controlplane.NodeStore, from, to int) error {
	for i := from; i < to; i++ {
		id := fmt.Sprintf("scale-%05d", i)
		if _, err := st.RecordHeartbeat(ctx, id, controlplane.NodeHeartbeat{At: time.Now(), Health: "ok", CPUCount: 128,
			MemoryTotalMiB: 1 << 20, Inventory: scaleInventory(id), Running: json.RawMessage(`[]`)}); err != nil {
			return err
		}
	}
	return nil
}

// heartbeatScaleNodes spreads one heartbeat per node over every interval.
func heartbeatScaleNodes(ctx context.Context, st controlplane.NodeStore, n int, every time.Duration) {
	const slots = 20
	tick := time.NewTicker(every / slots)
	defer tick.Stop()
	for slot := 0; ; slot = (slot + 1) % slots {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		lo, hi := n*slot/slots, n*(slot+1)/slots
		if err := heartbeatOnce(ctx, st, lo, hi); err != nil && ctx.Err() == nil {
			panic(fmt.Sprintf("heartbeat: %v", err))
		}
	}
}

// waitSchedulerSees waits until the scheduler's summary counts devices.
func waitSchedulerSees(t *testing.T, s *testServer, admin string, devices int) {
	require.Eventually(t, func() bool {
		var sum struct {
			Fragmentation struct {
				Free, Fragmented, Allocated int
			} `json:"fragmentation"`
		}
		r := s.do(http.MethodGet, "/api/v1/scheduler/summary", admin, nil)
		if r.Status != http.StatusOK || json.Unmarshal(r.Body, &sum) != nil {
			return false
		}
		f := sum.Fragmentation
		return f.Free+f.Fragmented+f.Allocated >= devices
	}, 2*time.Minute, 200*time.Millisecond, "the scheduler never saw the %d devices", devices)
	// The summary reads the store; the loop sees new nodes at its next node
	// sync. Wait for the loop too (its heteroflow_devices gauge), so tasks
	// submitted right after enrolment are not measured waiting for it.
	require.Eventually(t, func() bool {
		r := s.do(http.MethodGet, "/metrics", admin, nil)
		if r.Status != http.StatusOK {
			return false
		}
		seen := 0.0
		for _, line := range strings.Split(string(r.Body), "\n") {
			if strings.HasPrefix(line, "heteroflow_devices{") {
				if f := strings.Fields(line); len(f) == 2 {
					v, _ := strconv.ParseFloat(f[1], 64)
					seen += v
				}
			}
		}
		return seen >= float64(devices)
	}, 2*time.Minute, 200*time.Millisecond, "the scheduling loop never saw the %d devices", devices)
}

// scaleSpec is task i of the mix: shares of one device, whole devices and
// 2-device tasks (mean 0.525 devices: 10,000 tasks fit 1,000 × 8).
func scaleSpec(i int) map[string]any {
	spec := map[string]any{"name": fmt.Sprintf("scale-%d", i), "command": []string{"true"}, "qos": "bronze"}
	switch i % 20 {
	case 0:
		spec["device_count"], spec["compute_percent"] = 2, 100
	case 1, 2, 3:
		spec["device_count"], spec["compute_percent"] = 1, 100
	case 4, 5, 6, 7, 8, 9:
		spec["device_count"], spec["compute_percent"], spec["memory_mib"] = 1, 50, 20000
	default:
		spec["device_count"], spec["compute_percent"], spec["memory_mib"] = 1, 25, 10000
	}
	return spec
}

// traceMix draws task i from the GPU pods of an openb pod list, in the
// trace's order and cycling through it: num_gpu devices, each at gpu_milli
// of compute and the same share of an H100's memory. The trace's model
// constraints and CPU requests are left out (the fleet is one model, and
// the measurement is of the placement loop, not of CPU packing). The test
// refuses a mix whose demand would not fit the fleet with room to spare,
// since it waits for every task to be bound.
func traceMix(t *testing.T, path string, tasks, devices int) (func(int) map[string]any, string) {
	all, err := sim.LoadTasks(path)
	require.NoError(t, err, envScaleTrace)
	var pods []model.Request
	for _, r := range all {
		if r.DeviceCount > 0 {
			pods = append(pods, r)
		}
	}
	require.NotEmpty(t, pods, "%s has no GPU pods", path)
	// The API's smallest compute share is 10 %: smaller trace shares are
	// raised to it.
	const h100MiB, minPercent = 81559, 10
	percent := func(r model.Request) int { return max(minPercent, int(r.ComputeMilli)/10) }
	spec := func(i int) map[string]any {
		r := pods[i%len(pods)]
		s := map[string]any{"name": fmt.Sprintf("scale-%d", i), "command": []string{"true"}, "qos": "bronze",
			"device_count": r.DeviceCount, "compute_percent": percent(r)}
		if r.ComputeMilli < 1000 {
			s["memory_mib"] = percent(r) * h100MiB / 100
		}
		return s
	}
	demand, fractional := 0.0, 0
	for i := range tasks {
		r := pods[i%len(pods)]
		demand += float64(r.DeviceCount*percent(r)) / 100
		if r.ComputeMilli < 1000 {
			fractional++
		}
	}
	require.LessOrEqual(t, demand, 0.9*float64(devices),
		"the first %d GPU pods of %s ask for %.0f devices; the fleet has %d (use fewer tasks or more nodes)", tasks, path, demand, devices)
	return spec, fmt.Sprintf("%s (%d GPU pods cycled; %.3f devices per task, %d%% fractional)",
		filepath.Base(path), len(pods), demand/float64(tasks), 100*fractional/tasks)
}

func submitScaleTasks(t *testing.T, s *testServer, admin string, n, clients int, spec func(int) map[string]any) []time.Duration {
	lat := make([]time.Duration, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Int64
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				t0 := time.Now()
				if r := s.do(http.MethodPost, "/api/v1/tasks", admin, spec(i)); r.Status != http.StatusCreated {
					if failed.Add(1) == 1 {
						t.Errorf("submit %d: HTTP %d %s", i, r.Status, r.Body)
					}
					continue
				}
				lat[i] = time.Since(t0)
			}
		}()
	}
	wg.Wait()
	require.Zero(t, failed.Load(), "submissions refused")
	return lat
}

func withConn(t *testing.T, dsn string, f func(*pgx.Conn) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	return f(c)
}

func waitAllBound(t *testing.T, dsn string, n int, limit time.Duration) {
	deadline := time.Now().Add(limit)
	require.NoError(t, withConn(t, dsn, func(c *pgx.Conn) error {
		for {
			var bound int
			// A count on the state index, every 100 ms: the poll is not what
			// is measured (the figures come from the stored timestamps), so
			// it takes as little of the machine as it can.
			if err := c.QueryRow(context.Background(), `SELECT count(*) FROM tasks WHERE state IN ('scheduled', 'running')`).Scan(&bound); err != nil {
				return err
			}
			if bound >= n {
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%d of %d tasks bound after %v", bound, n, limit)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}))
}

// boundLatencies: per task, first scheduled transition − creation.
func boundLatencies(t *testing.T, dsn string) (lat []time.Duration, first, last time.Time) {
	require.NoError(t, withConn(t, dsn, func(c *pgx.Conn) error {
		rows, err := c.Query(context.Background(), `SELECT t.created_at, min(e.at) FROM tasks t
			JOIN task_events e ON e.task_id = t.id AND e.to_state = 'scheduled' GROUP BY t.id, t.created_at`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var created, at time.Time
			if err := rows.Scan(&created, &at); err != nil {
				return err
			}
			lat = append(lat, at.Sub(created))
			if first.IsZero() || at.Before(first) {
				first = at
			}
			if at.After(last) {
				last = at
			}
		}
		return rows.Err()
	}))
	return lat, first, last
}

// pct is the p-th percentile (nearest rank) of d; 100 = the maximum.
func pct(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(a, b int) bool { return s[a] < s[b] })
	i := (len(s)*p + 99) / 100
	return s[min(max(i-1, 0), len(s)-1)].Round(100 * time.Microsecond)
}
