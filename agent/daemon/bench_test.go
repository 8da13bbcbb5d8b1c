//go:build unix

package daemon_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heteroflow/heteroflow/agent/agenttest"
	"github.com/heteroflow/heteroflow/agent/daemon"
	"github.com/heteroflow/heteroflow/agent/protocol"
	"github.com/heteroflow/heteroflow/agent/runner"
	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/receivers/fakesmi"
)

// BenchmarkSubmitToStart: time from Assign (the scheduler's placement) to
// the task's first instruction on the node, over loopback with the agent
// long-polling. The task prints its own start time (date +%s%N), so the
// figure includes the long-poll wake-up, the HTTP answer, isolation
// setup, fork/exec and the shell's start.
func BenchmarkSubmitToStart(b *testing.B) {
	t := &testing.T{}
	dir := agenttest.DataDir(b)
	s := startStack(t, filepath.Join(dir, "hf.db"), "127.0.0.1:0")
	defer s.kill()
	var tok struct{ Token string }
	s.t = t
	s.call("POST", "/api/v1/bootstrap-tokens", map[string]any{}, &tok)
	sim := &simulated{opts: fakesmi.Options{StatePath: filepath.Join(dir, "state.json"),
		Profile: &fakesmi.Profile{Vendor: "nvidia", Model: "NVIDIA H100 80GB HBM3", Count: 8, MemoryMiB: 81559}}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	agentDir := filepath.Join(dir, "agent")
	go func() {
		_ = daemon.Run(ctx, daemon.Config{Server: s.url(), Token: tok.Token, DataDir: agentDir,
			Heartbeat: 10 * time.Second, PollWait: 30 * time.Second, Logger: quiet, SMI: sim.run, CLI: sim})
		close(done)
	}()
	defer func() { cancel(); <-done }()
	var nodeID string
	for nodeID == "" {
		nodes, _, _ := s.db.ListNodes(context.Background(), controlplane.NodeFilter{})
		if len(nodes) == 1 {
			nodeID = nodes[0].ID
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // the agent's first poll is waiting
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		id := s.task("sh", "-c", "date +%s%N")
		t0 := time.Now()
		if _, err := s.svc.Assign(context.Background(), id, nodeID,
			[]protocol.DeviceSlice{{Vendor: "nvidia", Index: i % 8, UUID: fmt.Sprint("GPU-", i%8)}}); err != nil {
			b.Fatal(err)
		}
		logDir := filepath.Join(agentDir, "tasks", fmt.Sprintf("%d-0", id))
		var startNS int64
		for deadline := time.Now().Add(20 * time.Second); startNS == 0 && time.Now().Before(deadline); {
			data, _, _, _ := runner.ReadLog(logDir, "stdout", 0, 64)
			if v, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64); err == nil && strings.HasSuffix(string(data), "\n") {
				startNS = v
			} else {
				time.Sleep(2 * time.Millisecond)
			}
		}
		if startNS == 0 {
			b.Fatalf("task %d did not start", id)
		}
		lat = append(lat, time.Unix(0, startNS).Sub(t0))
		for s.state(id) != controlplane.TaskSucceeded {
			time.Sleep(2 * time.Millisecond)
		}
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}
