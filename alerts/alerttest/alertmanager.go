// Package alerttest starts Debian's prometheus-alertmanager on a loopback
// port for tests, with a webhook receiver that records what it forwards.
package alerttest

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Alert is one alert of Alertmanager's webhook payload.
type Alert struct {
	Status      string            `json:"status"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

// AM is a running Alertmanager.
type AM struct {
	URL string // base URL of its API
	mu  sync.Mutex
	got []Alert // alerts forwarded to the webhook receiver, in order
}

// Received returns the alerts Alertmanager forwarded so far.
func (a *AM) Received() []Alert {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]Alert(nil), a.got...)
}

// Wait polls until cond holds on Received, or fails t after timeout.
func (a *AM) Wait(t testing.TB, timeout time.Duration, cond func([]Alert) bool) []Alert {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		got := a.Received()
		if cond(got) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("alertmanager: condition not met within %s; received %+v", timeout, got)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Start runs prometheus-alertmanager (skipping the test when it is not
// installed; make deps installs it) routing everything to a recording
// webhook with 1s grouping and send_resolved.
func Start(t testing.TB) *AM {
	t.Helper()
	bin, err := exec.LookPath("prometheus-alertmanager")
	if err != nil {
		if bin, err = exec.LookPath("alertmanager"); err != nil {
			if os.Getenv("HETEROFLOW_REQUIRE_ALERTMANAGER") != "" {
				t.Fatal("prometheus-alertmanager is required: apt-get install prometheus-alertmanager")
			}
			t.Skip("prometheus-alertmanager not installed (make deps installs it)")
		}
	}
	am := &AM{}
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p struct {
			Alerts []Alert `json:"alerts"`
		}
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &p); err == nil {
			am.mu.Lock()
			am.got = append(am.got, p.Alerts...)
			am.mu.Unlock()
		}
	}))
	t.Cleanup(hook.Close)
	dir := t.TempDir()
	cfg := fmt.Sprintf(`route:
  receiver: hook
  group_by: ['alertname', 'host_name', 'hw_index', 'severity']
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: hook
    webhook_configs:
      - url: %s/am
        send_resolved: true
`, hook.URL)
	if err := os.WriteFile(filepath.Join(dir, "am.yml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "am.yml"), "--storage.path="+filepath.Join(dir, "data"),
		fmt.Sprintf("--web.listen-address=127.0.0.1:%d", port), "--cluster.listen-address=")
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	am.URL = fmt.Sprintf("http://127.0.0.1:%d", port)
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(am.URL + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return am
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("alertmanager did not become ready: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
