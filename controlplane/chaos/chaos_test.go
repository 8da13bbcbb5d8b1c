package chaos

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestChaosShort is the short soak-and-chaos run of `go test`: a few
// hundred tasks over simulated agents and two real agent processes (in
// network namespaces when root), with kill -9 of the server and of agents
// and partitions, then the exact accounting. `heteroflow chaos` is the
// long run (docs/BENCHMARKS.md).
func TestChaosShort(t *testing.T) {
	if testing.Short() {
		t.Skip("chaos run skipped in -short mode")
	}
	dir := t.TempDir()
	// Real agents run tasks as an unprivileged account under root: the
	// account traverses the run folder as it would /var/lib.
	if err := os.Chmod(dir+"/..", 0o711); err != nil {
		t.Fatal(err)
	}
	_, ipErr := exec.LookPath("ip")
	opts := Options{Dir: dir, Tasks: 400, SimAgents: 30, RealAgents: 2, GPUsPerAgent: 4, CPUPercent: 10, MaxRetries: 2,
		FailPercent: 5, TaskMin: 10 * time.Millisecond, TaskMax: 150 * time.Millisecond, Heartbeat: time.Second,
		ServerKills: 1, AgentKills: 3, Partitions: 2, PartitionFor: 2 * time.Second,
		Netns: os.Geteuid() == 0 && ipErr == nil, Timeout: 3 * time.Minute}
	rep, err := Run(context.Background(), opts)
	b, _ := json.MarshalIndent(rep, "", "  ")
	t.Logf("report:\n%s", b)
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.OK(); err != nil {
		t.Fatal(err)
	}
	if rep.ServerKills != 1 || rep.AgentKills != 3 || rep.Partitions != 2 {
		t.Fatalf("faults not all injected: %+v", rep)
	}
}
