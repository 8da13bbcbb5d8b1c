package agentapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/agent/protocol"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// BenchmarkHeartbeat1000Agents: 1,000 enrolled nodes heartbeat over real
// HTTP against one in-process server (SQLite). Reports heartbeat latency
// p50/p99, process CPU per heartbeat and RSS. Client and server share the
// process, so CPU and RSS are upper bounds for the server alone.
func BenchmarkHeartbeat1000Agents(b *testing.B) {
	e, keys, body := heartbeatSetup(b)
	benchClosedLoop(b, e, keys, body)
}

// BenchmarkHeartbeat1000AgentsAt10s is the realistic load: 1,000 agents at
// the default 10 s period = 100 heartbeats/s, sent open-loop (each on its
// own schedule, not waiting for the previous answer).
func BenchmarkHeartbeat1000AgentsAt10s(b *testing.B) {
	e, keys, body := heartbeatSetup(b)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1024}}
	lat := make([]time.Duration, b.N)
	var failed atomic.Int64
	var wg sync.WaitGroup
	cpu0 := cpuTime()
	b.ResetTimer()
	tick := time.NewTicker(10 * time.Millisecond)
	for i := 0; i < b.N; i++ {
		<-tick.C
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			req, _ := http.NewRequest("POST", e.srv.URL+"/api/v1/agents/heartbeat", bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+keys[i%len(keys)])
			start := time.Now()
			resp, err := client.Do(req)
			if err != nil || resp.StatusCode != 200 {
				failed.Add(1)
			}
			if resp != nil {
				resp.Body.Close()
			}
			lat[i] = time.Since(start)
		}(i)
	}
	wg.Wait()
	tick.Stop()
	b.StopTimer()
	cpu := cpuTime() - cpu0
	require.Zero(b, failed.Load())
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/hb")
	b.ReportMetric(float64(rssKiB())/1024, "rss-MiB")
}

func heartbeatSetup(b *testing.B) (*env, []string, []byte) {
	const agents = 1000
	t := &testing.T{}
	e := newEnv(t, Options{})
	e.t = t
	keys := make([]string, agents)
	inv := []inventory.Snapshot{{Vendor: "nvidia", Devices: make([]inventory.Device, 8)}}
	for i := range keys {
		var tok tokenJSON
		if e.call("POST", "/api/v1/bootstrap-tokens", e.adminKey, tokenRequest{}, &tok) != http.StatusCreated {
			b.Fatal("token")
		}
		var out protocol.EnrollResponse
		if e.call("POST", "/api/v1/agents/enroll", "", protocol.EnrollRequest{Token: tok.Token,
			Hostname: "n" + strconv.Itoa(i), Inventory: inv}, &out) != http.StatusCreated {
			b.Fatal("enroll")
		}
		keys[i] = out.APIKey
	}
	body, _ := json.Marshal(protocol.Heartbeat{Health: "ok", CPUCount: 64, MemoryTotalMiB: 1 << 20,
		MemoryFreeMiB: 1 << 19, Running: []protocol.RunningTask{}})
	return e, keys, body
}

func benchClosedLoop(b *testing.B, e *env, keys []string, body []byte) {
	const agents = 1000
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	var lat []time.Duration
	var mu sync.Mutex
	var next atomic.Int64
	var failed atomic.Int64
	cpu0 := cpuTime()
	b.ResetTimer()
	b.SetParallelism(32) // ×GOMAXPROCS concurrent agents
	b.RunParallel(func(pb *testing.PB) {
		var mine []time.Duration
		for pb.Next() {
			k := keys[next.Add(1)%agents]
			req, _ := http.NewRequest("POST", e.srv.URL+"/api/v1/agents/heartbeat", bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+k)
			start := time.Now()
			resp, err := client.Do(req)
			if err != nil || resp.StatusCode != 200 {
				failed.Add(1)
			}
			if resp != nil {
				resp.Body.Close()
			}
			mine = append(mine, time.Since(start))
		}
		mu.Lock()
		lat = append(lat, mine...)
		mu.Unlock()
	})
	b.StopTimer()
	cpu := cpuTime() - cpu0
	require.Zero(b, failed.Load())
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/hb")
	b.ReportMetric(float64(rssKiB())/1024, "rss-MiB")
	// At the 10 s default period, 1,000 agents send 100 heartbeats/s.
	b.ReportMetric(100*float64(cpu.Microseconds())/float64(b.N)/1e6*100, "cpu%-at-1000-agents")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func rssKiB() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			return n
		}
	}
	return 0
}

var _ = fmt.Sprint
