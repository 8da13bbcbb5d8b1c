package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane/postgres/pgtest"
)

const victoriaBin = "/usr/bin/victoria-metrics"

// startVictoria runs Debian's single-node VictoriaMetrics as the shared
// metrics store of an HA run and returns its address.
func startVictoria(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(victoriaBin); err != nil {
		t.Skipf("%s not installed (apt-get install victoria-metrics): %v", victoriaBin, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	cmd := exec.Command(victoriaBin, "-storageDataPath="+t.TempDir(), "-httpListenAddr="+addr,
		"-search.latencyOffset=0s", "-retentionPeriod=1y", "-loggerLevel=ERROR")
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	require.Eventually(t, func() bool {
		res, err := http.Get("http://" + addr + "/health")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	}, time.Minute, 100*time.Millisecond)
	return addr
}

// TestChaosHA is the HA run of `make test`: three real server processes on
// one PostgreSQL database with Debian VictoriaMetrics as the shared metrics
// store, 20 simulated agents spread over the servers, 2,000 tasks submitted
// round-robin to every server while the scheduler leader is killed with
// SIGKILL three times (each time restarted). Every acknowledged task ends
// exactly once (terminal, no run twice at once, the ledger empty), another
// server leads after each kill (the failover times are logged and kept in
// docs/BENCHMARKS.md) and every survivor answers the API after each kill.
func TestChaosHA(t *testing.T) {
	if testing.Short() {
		t.Skip("HA chaos run skipped in -short mode")
	}
	dsn := pgtest.Schema(t)
	vm := startVictoria(t)
	dir := t.TempDir()
	opts := Options{Dir: dir, Tasks: 2000, SimAgents: 20, GPUsPerAgent: 8, MaxRetries: 2, FailPercent: 5,
		TaskMin: 10 * time.Millisecond, TaskMax: 100 * time.Millisecond, Heartbeat: time.Second,
		ServerKills: 3, Timeout: 6 * time.Minute, Servers: 3, PostgresDSN: dsn,
		RemoteWriteURL: fmt.Sprintf("http://%s/api/v1/write", vm), RemoteQueryURL: "http://" + vm}
	rep, err := Run(context.Background(), opts)
	b, _ := json.MarshalIndent(rep, "", "  ")
	t.Logf("report:\n%s", b)
	require.NoError(t, err)
	require.NoError(t, rep.OK())
	require.Equal(t, 3, rep.ServerKills, "every leader kill happened")
	require.Len(t, rep.FailoverMillis, 3, "a server took over after every kill")
	require.Equal(t, 2000, rep.Acknowledged)
	for i, ms := range rep.FailoverMillis {
		t.Logf("failover %d: %d ms", i+1, ms)
	}
	require.GreaterOrEqual(t, len(rep.SurvivorAnswers), 2, "survivors answered")
	total := 0
	for _, n := range rep.SurvivorAnswers {
		total += n
	}
	require.Equal(t, 3*2, total, "both survivors answered after each of the three kills")
}
