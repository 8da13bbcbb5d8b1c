package collector

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const prometheusBin = "/usr/bin/prometheus"

// startPrometheus runs Debian's Prometheus with the remote-write receiver on
// a free loopback port and returns its base URL.
func startPrometheus(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(prometheusBin); err != nil {
		t.Skipf("%s not installed (apt-get install prometheus; `make deps` does): %v", prometheusBin, err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())

	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	require.NoError(t, os.WriteFile(cfg, []byte("global:\n  scrape_interval: 15s\n"), 0o644))
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, prometheusBin, "--config.file="+cfg,
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+addr,
		"--web.enable-remote-write-receiver")
	logf, err := os.Create(filepath.Join(dir, "prometheus.log"))
	require.NoError(t, err)
	cmd.Stdout, cmd.Stderr = logf, logf
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cancel(); _ = cmd.Wait(); _ = logf.Close() })

	base := "http://" + addr
	require.Eventually(t, func() bool {
		resp, err := http.Get(base + "/-/ready")
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 60*time.Second, 200*time.Millisecond, "prometheus did not become ready")
	return base
}

// query returns the label sets of an instant PromQL query's result.
func query(base, q string) ([]map[string]string, error) {
	resp, err := http.Get(base + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Data   struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, err
	}
	if body.Status != "success" {
		return nil, fmt.Errorf("query %q: status %s", q, body.Status)
	}
	out := make([]map[string]string, 0, len(body.Data.Result))
	for _, r := range body.Data.Result {
		out = append(out, r.Metric)
	}
	return out, nil
}

// TestCollectorRemoteWritesToPrometheus is the acceptance path: simulated
// vendor CLIs → our receivers in the in-process collector → remote write →
// a real Prometheus, read back with its query API.
func TestCollectorRemoteWritesToPrometheus(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Prometheus and a collector")
	}
	base := startPrometheus(t)
	ac := AgentConfig{
		Vendors: []string{"nvidia", "ascend"}, ServerURL: base, Interval: time.Second,
		HostMetrics: true, NodeName: "sim-node-1", ToolPaths: simulatedCLIs(t),
	}
	doc, err := ac.YAML()
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, Settings{ConfigURIs: []string{YAMLURI(doc)}, Embedded: true}) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()

	var series []map[string]string
	var exited error
	require.Eventually(t, func() bool {
		select {
		case exited = <-done:
			done <- exited
			return true
		default:
		}
		series, err = query(base, `hw_gpu_memory_limit_bytes`)
		return err == nil && len(series) == 4
	}, 90*time.Second, 500*time.Millisecond, "expected 4 hw.gpu.memory.limit series (2 nvidia + 2 ascend), last: %v %v", series, err)
	require.NoError(t, exited, "collector exited early")
	require.Len(t, series, 4)

	vendors := map[string]int{}
	for _, s := range series {
		vendors[s["hw_vendor"]]++
		require.Equal(t, "sim-node-1", s["host_name"], "host_resource must label every series")
		require.NotEmpty(t, s["hw_id"])
		require.Equal(t, "gpu", s["hw_type"])
	}
	require.Equal(t, map[string]int{"nvidia": 2, "ascend": 2}, vendors)

	for _, q := range []string{
		`hw_gpu_utilization_ratio{hw_id="GPU-11111111-2222-3333-4444-555555555501"} == 0.37`,
		`hw_gpu_memory_usage_bytes{hw_vendor="ascend",hw_index="0"} == 4096 * 1024 * 1024`,
		`hw_gpu_temperature_celsius{hw_vendor="nvidia"}`,
		`system_cpu_time_seconds_total{host_name="sim-node-1"}`,
	} {
		require.Eventually(t, func() bool {
			got, err := query(base, q)
			return err == nil && len(got) > 0
		}, 30*time.Second, 500*time.Millisecond, "no series for %s", q)
	}
	// The second A100 prints power_draw N/A: absent, never 0.
	got, err := query(base, `hw_gpu_power_draw_watts{hw_id="GPU-11111111-2222-3333-4444-555555555502"}`)
	require.NoError(t, err)
	require.Empty(t, got)
}
