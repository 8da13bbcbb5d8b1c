package metricstore_test

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/golang/snappy"
	"github.com/prometheus/prometheus/prompb"
	"github.com/stretchr/testify/require"
)

// Debian's packages, installed by `make deps`.
const (
	prometheusBin = "/usr/bin/prometheus"
	promtoolBin   = "/usr/bin/promtool"
	victoriaBin   = "/usr/bin/victoria-metrics"
)

func requireBinary(tb testing.TB, path string) {
	tb.Helper()
	if _, err := os.Stat(path); err != nil {
		tb.Skipf("%s not installed (apt-get install prometheus victoria-metrics, or `make deps`): %v", path, err)
	}
}

func freeAddr(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(tb, err)
	addr := l.Addr().String()
	require.NoError(tb, l.Close())
	return addr
}

// startProcess runs bin until the test ends and waits for readyPath.
func startProcess(tb testing.TB, addr, readyPath, bin string, args ...string) {
	tb.Helper()
	cmd := exec.Command(bin, args...)
	logf, err := os.Create(filepath.Join(tb.TempDir(), filepath.Base(bin)+".log"))
	require.NoError(tb, err)
	cmd.Stdout, cmd.Stderr = logf, logf
	require.NoError(tb, cmd.Start())
	tb.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = logf.Close()
	})
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get("http://" + addr + readyPath)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	out, _ := os.ReadFile(logf.Name())
	tb.Fatalf("%s did not become ready on %s:\n%s", bin, addr, out)
}

// startPrometheus starts Debian's Prometheus with the remote-write receiver
// and the given extra configuration; it returns its address.
func startPrometheus(tb testing.TB, configYAML string) string {
	return startPrometheusAt(tb, freeAddr(tb), configYAML)
}

// startPrometheusAt is startPrometheus on a chosen address, for configs
// that must name it (self-scrape).
func startPrometheusAt(tb testing.TB, addr, configYAML string) string {
	tb.Helper()
	requireBinary(tb, prometheusBin)
	dir := tb.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	require.NoError(tb, os.WriteFile(cfg, []byte(configYAML), 0o600))
	startProcess(tb, addr, "/-/ready", prometheusBin,
		"--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--web.enable-remote-write-receiver")
	return addr
}

// startVictoria starts Debian's single-node VictoriaMetrics; it returns its
// address. Latency offset and cache are off so tests see fresh samples.
func startVictoria(tb testing.TB) string {
	tb.Helper()
	requireBinary(tb, victoriaBin)
	addr := freeAddr(tb)
	startProcess(tb, addr, "/health", victoriaBin,
		"-storageDataPath="+tb.TempDir(), "-httpListenAddr="+addr,
		"-search.latencyOffset=0s", "-search.disableCache", "-retentionPeriod=1y")
	return addr
}

func url(addr, path string) string { return fmt.Sprintf("http://%s%s", addr, path) }

// remoteWriteBody is a snappy remote-write 1.0 request with one sample.
func remoteWriteBody(tb testing.TB, name string, at time.Time, v float64) []byte {
	tb.Helper()
	raw, err := (&prompb.WriteRequest{Timeseries: []prompb.TimeSeries{{
		Labels:  []prompb.Label{{Name: "__name__", Value: name}},
		Samples: []prompb.Sample{{Timestamp: at.UnixMilli(), Value: v}},
	}}}).Marshal()
	require.NoError(tb, err)
	return snappy.Encode(nil, raw)
}
