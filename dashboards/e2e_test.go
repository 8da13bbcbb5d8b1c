//go:build unix

package dashboards

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang/snappy"
	"github.com/prometheus/prometheus/prompb"
	"github.com/stretchr/testify/require"
)

// harness window: Grafana's $__range for the queries, and how much history
// is copied into the reference Prometheus.
const (
	harnessRange   = "10m"
	harnessRangeS  = 600
	harnessTimeout = 3 * time.Minute
)

// TestPanelQueriesReturnData is the dashboards' end-to-end check: the real
// binary runs a server and three simulated heterogeneous nodes (NVIDIA H100
// with MIG, Huawei Ascend 910B, Cambricon MLU370, their vendor CLIs played
// by fakesmi) with a small workload (a running task, one that succeeds,
// one that fails, one that cannot be placed yet). Every panel query and
// every variable selector of the committed JSON must return data through
// our /prometheus API; then the same series are copied into a real
// Prometheus (Debian's, via its remote-write receiver) and every query must
// return data there too.
func TestPanelQueriesReturnData(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds the binary and runs a server with three agents")
	}
	qs := loadQueries(t)
	h := startHarness(t)
	h.workload()

	// Wait until every query has data (rates need a minute of samples).
	var at time.Time
	var missing []string
	deadline := time.Now().Add(harnessTimeout)
	for {
		at = time.Now()
		missing = missing[:0]
		for _, q := range qs {
			n, err := h.ours.count(q, at)
			require.NoError(t, err, "%s: %s", q, q.Expr)
			if n == 0 {
				missing = append(missing, q.String()+": "+q.Expr)
			}
		}
		if len(missing) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Second)
	}
	require.Empty(t, missing, "queries without data through /prometheus after %s", harnessTimeout)
	t.Logf("%d queries returned data through /prometheus", len(qs))

	// A selection without series gives "no data", never an error: every
	// variable set to a value nothing carries.
	for _, q := range qs {
		q.Expr = varRef.ReplaceAllStringFunc(q.Expr, func(v string) string {
			if strings.HasPrefix(v, "$__") {
				return v
			}
			return "no-such-value"
		})
		n, err := h.ours.count(q, at)
		require.NoError(t, err, "%s with no matching series: %s", q, q.Expr)
		if !q.Variable && !strings.Contains(q.Expr, "or vector(0)") {
			require.Zero(t, n, "%s with no matching series returned data: %s", q, q.Expr)
		}
	}

	// The alert engine evaluates alerts/rules/dcgm.yml: dcgm-exporter's
	// series exist for every vendor of the harness, with its labels.
	for _, rec := range dcgmRecords {
		want := []string{"ascend", "cambricon", "nvidia"}
		if rec == "DCGM_FI_DEV_POWER_MGMT_LIMIT" {
			want = want[2:] // only nvidia-smi reports an enforced limit here
		}
		waitUntil(t, rec+" for "+strings.Join(want, ", "), time.Minute, func() bool {
			body, err := h.ours.get("/api/v1/query", url.Values{"query": {`count by (hw_vendor) (` + rec + `{gpu!="", UUID!="", device!="", modelName!="", Hostname!=""})`}})
			require.NoError(t, err)
			return strings.Count(string(body), `"hw_vendor"`) >= len(want) && allIn(string(body), want)
		})
	}

	if _, err := exec.LookPath("prometheus"); err != nil {
		t.Skip("prometheus not installed (make deps installs Debian's prometheus package)")
	}
	ref := startPrometheus(t)
	copied := h.copyInto(t, ref, at)
	t.Logf("copied %d samples into Prometheus", copied)
	for _, q := range qs {
		n, err := ref.count(q, at)
		require.NoError(t, err, "Prometheus: %s: %s", q, q.Expr)
		require.NotZero(t, n, "Prometheus returned no data for %s: %s", q, q.Expr)
	}
}

// promAPI is a Prometheus HTTP API root (ours under /prometheus, or a real one).
type promAPI struct {
	base  string
	token string
}

func (p promAPI) get(path string, v url.Values) ([]byte, error) {
	req, err := http.NewRequest(http.MethodPost, p.base+path, strings.NewReader(v.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if p.token != "" {
		req.Header.Set("Authorization", "Bearer "+p.token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s: %s", path, res.Status, body)
	}
	return body, nil
}

// count runs q as Grafana would with every variable on All: a panel
// target as an instant query at `at`, a variable as a series lookup over
// the window. It returns how many series came back.
func (p promAPI) count(q query, at time.Time) (int, error) {
	expr := expand(q.Expr, harnessRange, harnessRangeS)
	ts := strconv.FormatFloat(float64(at.UnixMilli())/1000, 'f', 3, 64)
	if q.Variable {
		body, err := p.get("/api/v1/series", url.Values{"match[]": {expr},
			"start": {strconv.FormatInt(at.Add(-harnessRangeS*time.Second).Unix(), 10)}, "end": {ts}})
		if err != nil {
			return 0, err
		}
		var r struct{ Data []map[string]string }
		if err := json.Unmarshal(body, &r); err != nil {
			return 0, err
		}
		return len(r.Data), nil
	}
	body, err := p.get("/api/v1/query", url.Values{"query": {expr}, "time": {ts}})
	if err != nil {
		return 0, err
	}
	var r struct {
		Data struct {
			ResultType string          `json:"resultType"`
			Result     json.RawMessage `json:"result"`
		}
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return 0, err
	}
	if r.Data.ResultType == "scalar" {
		return 1, nil
	}
	var res []json.RawMessage
	if err := json.Unmarshal(r.Data.Result, &res); err != nil {
		return 0, err
	}
	return len(res), nil
}

// harness is the server and its agents, run from a freshly built binary.
type harness struct {
	t    *testing.T
	dir  string
	bin  string
	api  string
	ours promAPI
}

func startHarness(t *testing.T) *harness {
	t.Helper()
	dir := t.TempDir()
	// Agents run tasks as an unprivileged account, which must be able to
	// traverse down to their data folders.
	require.NoError(t, os.Chmod(filepath.Dir(dir), 0o711))
	require.NoError(t, os.Chmod(dir, 0o711))
	h := &harness{t: t, dir: dir, bin: filepath.Join(dir, "heteroflow")}
	build := exec.Command("go", "build", "-o", h.bin, "./cmd/heteroflow")
	build.Dir = ".."
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build: %s", out)

	addr := freeAddr(t)
	cfg := filepath.Join(dir, "server.yaml")
	// Self-ingest every 2 s so server series fill a 1 m rate window quickly.
	require.NoError(t, os.WriteFile(cfg, []byte("console_addr: \"\"\nmetrics:\n  self_ingest_interval: 2s\n"), 0o600))
	const password = "Dashboards-Pass-123!"
	h.spawn("server", []string{"HETEROFLOW_ADMIN_PASSWORD=" + password},
		"server", "--config", cfg, "--data-dir", filepath.Join(dir, "server"), "--api-addr", addr)
	h.api = "http://" + addr
	waitUntil(t, "server health", 30*time.Second, func() bool {
		res, err := http.Get(h.api + "/health")
		if err == nil {
			res.Body.Close()
		}
		return err == nil && res.StatusCode == http.StatusOK
	})
	var login struct {
		AccessToken string `json:"access_token"`
	}
	h.call(http.MethodPost, "/api/v1/auth/login", "", map[string]string{"username": "admin", "password": password}, &login)
	var key struct {
		Key string `json:"key"`
	}
	h.call(http.MethodPost, "/api/v1/apikeys", login.AccessToken, map[string]any{"name": "dashboards", "role": "admin"}, &key)
	require.NotEmpty(t, key.Key)
	h.ours = promAPI{base: h.api + "/prometheus", token: key.Key}

	nodes := map[string]string{
		"h100":   `{"vendor":"nvidia","model":"NVIDIA H100 80GB HBM3","count":4,"memory_mib":81559,"partitions":[{"device":0,"profile":"3g.40gb","id":1},{"device":0,"profile":"3g.40gb","id":2}]}`,
		"ascend": `{"vendor":"ascend","model":"910B3","count":4,"memory_mib":65536}`,
		"mlu":    `{"vendor":"cambricon","model":"MLU370-X8","count":2,"memory_mib":49152}`,
	}
	for name, profile := range nodes {
		h.node(name, profile)
	}
	waitUntil(t, "three nodes online", time.Minute, func() bool {
		var list struct {
			Items []struct {
				State string `json:"state"`
			} `json:"items"`
		}
		h.call(http.MethodGet, "/api/v1/nodes", h.ours.token, nil, &list)
		online := 0
		for _, n := range list.Items {
			if n.State == "online" {
				online++
			}
		}
		return online == len(nodes)
	})
	return h
}

// node installs fakesmi CLIs for profile and runs an agent that finds them.
func (h *harness) node(name, profile string) {
	d := filepath.Join(h.dir, name)
	require.NoError(h.t, os.MkdirAll(d, 0o755))
	prof := filepath.Join(d, "profile.json")
	require.NoError(h.t, os.WriteFile(prof, []byte(profile), 0o600))
	state := filepath.Join(d, "state.json")
	out, err := exec.Command(h.bin, "fakesmi", "install", "--dir", filepath.Join(d, "bin"), "--profile", prof,
		"--state", state, "--log", filepath.Join(d, "cli.log")).CombinedOutput()
	require.NoError(h.t, err, "fakesmi install: %s", out)
	var tok struct {
		Token string `json:"token"`
	}
	h.call(http.MethodPost, "/api/v1/bootstrap-tokens", h.ours.token, map[string]any{"description": "dashboards " + name}, &tok)
	h.spawn(name, []string{"PATH=" + filepath.Join(d, "bin") + ":" + os.Getenv("PATH"), "HETEROFLOW_FAKESMI_STATE=" + state},
		"agent", "--server", h.api, "--token", tok.Token, "--data-dir", filepath.Join(d, "agent"),
		"--heartbeat", "1s", "--poll-wait", "2s", "--kill-grace", "1s", "--label", "sim="+name)
}

// workload submits the tasks whose series the tasks, scheduler and usage
// dashboards chart.
func (h *harness) workload() {
	submit := func(spec map[string]any) {
		h.call(http.MethodPost, "/api/v1/tasks", h.ours.token, spec, nil)
	}
	for _, tenant := range []string{"team-a", "team-b"} { // tasks name existing tenants
		h.call(http.MethodPost, "/api/v1/tenants", h.ours.token, map[string]any{"name": tenant}, nil)
	}
	submit(map[string]any{"name": "train", "command": []string{"sleep", "900"}, "device_count": 1, "vendor": "nvidia", "tenant": "team-a"})
	submit(map[string]any{"name": "infer", "command": []string{"sleep", "900"}, "device_count": 1, "vendor": "cambricon", "tenant": "team-b"})
	submit(map[string]any{"name": "eval", "command": []string{"true"}, "device_count": 2, "vendor": "ascend", "tenant": "team-b"})
	submit(map[string]any{"name": "broken", "command": []string{"sh", "-c", "exit 3"}, "device_count": 1, "vendor": "ascend", "tenant": "team-a"})
	// Needs every H100 while "train" holds one: unschedulable, with a reason.
	submit(map[string]any{"name": "big", "command": []string{"true"}, "device_count": 4, "vendor": "nvidia", "tenant": "team-a"})
}

// call sends a JSON request and decodes a 2xx answer into out.
func (h *harness) call(method, path, token string, body, out any) {
	h.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(h.t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, h.api+path, rd)
	require.NoError(h.t, err)
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(h.t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(h.t, err)
	require.Less(h.t, res.StatusCode, 300, "%s %s: %s", method, path, raw)
	if out != nil {
		require.NoError(h.t, json.Unmarshal(raw, out), string(raw))
	}
}

// spawn runs the binary until the test ends; its output goes to dir/name.log.
func (h *harness) spawn(name string, env []string, args ...string) {
	h.t.Helper()
	logf, err := os.Create(filepath.Join(h.dir, name+".log"))
	require.NoError(h.t, err)
	cmd := exec.Command(h.bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	require.NoError(h.t, cmd.Start())
	h.t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		logf.Close()
		if h.t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			h.t.Logf("%s log (tail):\n%s", name, tail(b, 3000))
		}
	})
}

// copyInto reads every raw sample of the window from our API (a range
// selector over all series) and remote-writes it into ref.
func (h *harness) copyInto(t *testing.T, ref *prometheusProc, at time.Time) int {
	t.Helper()
	ts := strconv.FormatFloat(float64(at.UnixMilli())/1000, 'f', 3, 64)
	body, err := h.ours.get("/api/v1/query", url.Values{"query": {`{__name__=~".+"}[` + harnessRange + `]`}, "time": {ts}})
	require.NoError(t, err)
	var r struct {
		Data struct {
			Result []struct {
				Metric map[string]string
				Values [][2]any
			}
		}
	}
	require.NoError(t, json.Unmarshal(body, &r))
	require.NotEmpty(t, r.Data.Result)
	var wr prompb.WriteRequest
	n := 0
	flush := func() {
		if len(wr.Timeseries) == 0 {
			return
		}
		raw, err := wr.Marshal()
		require.NoError(t, err)
		req, err := http.NewRequest(http.MethodPost, ref.url+"/api/v1/write", bytes.NewReader(snappy.Encode(nil, raw)))
		require.NoError(t, err)
		req.Header.Set("Content-Encoding", "snappy")
		req.Header.Set("Content-Type", "application/x-protobuf")
		req.Header.Set("X-Prometheus-Remote-Write-Version", "0.1.0")
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		msg, _ := io.ReadAll(res.Body)
		res.Body.Close()
		require.Less(t, res.StatusCode, 300, "remote write into Prometheus: %s", msg)
		wr.Timeseries = wr.Timeseries[:0]
	}
	for _, s := range r.Data.Result {
		names := make([]string, 0, len(s.Metric))
		for k := range s.Metric {
			names = append(names, k)
		}
		sort.Strings(names)
		ts := prompb.TimeSeries{}
		for _, k := range names {
			ts.Labels = append(ts.Labels, prompb.Label{Name: k, Value: s.Metric[k]})
		}
		for _, v := range s.Values {
			sec, _ := v[0].(float64)
			str, _ := v[1].(string)
			f, err := strconv.ParseFloat(str, 64)
			require.NoError(t, err)
			ts.Samples = append(ts.Samples, prompb.Sample{Timestamp: int64(sec*1000 + 0.5), Value: f})
		}
		n += len(ts.Samples)
		wr.Timeseries = append(wr.Timeseries, ts)
		if len(wr.Timeseries) >= 200 {
			flush()
		}
	}
	flush()
	return n
}

// prometheusProc is Debian's prometheus with an empty scrape config and
// its remote-write receiver on.
type prometheusProc struct {
	promAPI
	url string
}

func startPrometheus(t *testing.T) *prometheusProc {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	require.NoError(t, os.WriteFile(cfg, []byte("global:\n  scrape_interval: 1m\n"), 0o600))
	addr := freeAddr(t)
	cmd := exec.Command("prometheus", "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--web.enable-remote-write-receiver", "--storage.tsdb.retention.time=1d")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("prometheus log (tail):\n%s", tail(out.Bytes(), 3000))
		}
	})
	p := &prometheusProc{promAPI: promAPI{base: "http://" + addr}, url: "http://" + addr}
	waitUntil(t, "prometheus ready", 30*time.Second, func() bool {
		res, err := http.Get(p.url + "/-/ready")
		if err == nil {
			res.Body.Close()
		}
		return err == nil && res.StatusCode == http.StatusOK
	})
	return p
}

func allIn(s string, words []string) bool {
	for _, w := range words {
		if !strings.Contains(s, `"`+w+`"`) {
			return false
		}
	}
	return true
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().String()
}

func waitUntil(t *testing.T, what string, limit time.Duration, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
