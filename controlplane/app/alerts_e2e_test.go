package app

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/alerts/alerttest"
	"github.com/heteroflow/heteroflow/alerts/notify"
	"github.com/heteroflow/heteroflow/controlplane/server"
)

// hookReceiver is a webhook endpoint that checks the HMAC signature and
// records each notification's kind and alert id.
type hookReceiver struct {
	mu   sync.Mutex
	got  []string // "firing:<id>" / "resolved:<id>"
	srv  *httptest.Server
	errs []string
}

func newHookReceiver(t *testing.T, secret string) *hookReceiver {
	h := &hookReceiver{}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		ts := r.Header.Get(notify.HeaderTimestamp)
		m := hmac.New(sha256.New, []byte(secret))
		m.Write([]byte(ts + "."))
		m.Write(body)
		h.mu.Lock()
		defer h.mu.Unlock()
		if r.Header.Get(notify.HeaderSignature) != "sha256="+hex.EncodeToString(m.Sum(nil)) {
			h.errs = append(h.errs, "bad signature")
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		var p notify.WebhookPayload
		if err := json.Unmarshal(body, &p); err != nil {
			h.errs = append(h.errs, err.Error())
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		h.got = append(h.got, p.Kind+":"+strconv.FormatInt(p.Alert.ID, 10))
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hookReceiver) received() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.got...)
}

// loadGen pushes a simulated node's GPU utilisation every 250ms into
// whichever server is current (the test restarts it).
type loadGen struct {
	mu   sync.Mutex
	s    *testServer
	load float64
	stop chan struct{}
	done chan struct{}
}

func (g *loadGen) set(s *testServer, load float64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s != nil {
		g.s = s
	}
	g.load = load
}

// detach stops pushing (the server is about to stop).
func (g *loadGen) detach() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.s = nil
}

func (g *loadGen) run() {
	defer close(g.done)
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		g.mu.Lock()
		if g.s != nil {
			_ = g.s.tryPush("sim-1", g.load, time.Now())
		}
		g.mu.Unlock()
		select {
		case <-g.stop:
			return
		case <-t.C:
		}
	}
}

// TestAlertEndToEnd: a simulated node's GPU load rises above a rule's
// threshold → pending → firing → a real Alertmanager and a signed webhook
// receive it → it is acknowledged through the API → the server restarts
// (no instance lost, nothing sent twice) → the load falls → RESOLVED, and
// the resolved notification reaches both receivers.
func TestAlertEndToEnd(t *testing.T) {
	am := alerttest.Start(t)
	const secret = "e2e-secret"
	hook := newHookReceiver(t, secret)
	dir := t.TempDir()
	fast := func(c *server.Config) { c.Alerts.EvaluationInterval = server.Duration(time.Second) }
	s := startServerWith(t, dir, fast)
	admin := s.adminToken()

	s.ok(http.StatusCreated, http.MethodPost, "/api/v1/alert-channels", admin, map[string]any{"name": "am", "type": "alertmanager",
		"config": map[string]string{"url": am.URL}, "levels": []string{"ERROR"}}, nil)
	s.ok(http.StatusCreated, http.MethodPost, "/api/v1/alert-channels", admin, map[string]any{"name": "hook", "type": "webhook",
		"config": map[string]string{"url": hook.srv.URL, "secret": secret}}, nil)
	s.ok(http.StatusCreated, http.MethodPost, "/api/v1/alert-rules", admin, map[string]any{"name": "SimGPULoad",
		"expr": `hw_gpu_utilization_ratio{host_name="sim-1"} > 0.9`, "for": "3s", "level": "ERROR",
		"annotations": map[string]string{"summary": "GPU on {{ $labels.host_name }} at {{ $value }}"}}, nil)

	gen := &loadGen{stop: make(chan struct{}), done: make(chan struct{})}
	gen.set(s, 0.3)
	go gen.run()
	t.Cleanup(func() { close(gen.stop); <-gen.done })
	time.Sleep(2 * time.Second)

	type alertList struct {
		Items []struct {
			ID    int64  `json:"id"`
			State string `json:"state"`
		}
		Total int
	}
	var promAlerts struct {
		Data struct {
			Alerts []struct{ State string }
		}
	}
	gen.set(nil, 0.97)
	require.Eventually(t, func() bool {
		s.ok(http.StatusOK, http.MethodGet, "/prometheus/api/v1/alerts", admin, nil, &promAlerts)
		for _, a := range promAlerts.Data.Alerts {
			if a.State == "pending" {
				return true
			}
		}
		return false
	}, 15*time.Second, 100*time.Millisecond, "pending first")
	var list alertList
	s.ok(http.StatusOK, http.MethodGet, "/api/v1/alerts?rule=SimGPULoad", admin, nil, &list)
	require.Zero(t, list.Total, "no instance while pending")

	require.Eventually(t, func() bool {
		s.ok(http.StatusOK, http.MethodGet, "/api/v1/alerts?rule=SimGPULoad", admin, nil, &list)
		return list.Total == 1 && list.Items[0].State == "ACTIVE"
	}, 15*time.Second, 200*time.Millisecond, "firing → ACTIVE")
	id := strconv.FormatInt(list.Items[0].ID, 10)
	require.Eventually(t, func() bool { return len(hook.received()) == 1 }, 15*time.Second, 100*time.Millisecond)
	require.Equal(t, []string{"firing:" + id}, hook.received())
	fired := am.Wait(t, 20*time.Second, func(a []alerttest.Alert) bool { return len(a) > 0 })
	require.Equal(t, "firing", fired[0].Status)
	require.Equal(t, "SimGPULoad", fired[0].Labels["alertname"])
	require.Equal(t, "sim-1", fired[0].Labels["host_name"])

	s.ok(http.StatusOK, http.MethodPost, "/api/v1/alerts/"+id+"/ack", admin, map[string]string{"comment": "looking"}, nil)

	// Restart in the middle: the alert keeps firing across it.
	gen.detach()
	s.stop()
	s = startServerWith(t, dir, fast)
	gen.set(s, 0.97)
	admin = s.adminToken()
	time.Sleep(5 * time.Second) // several evaluations on the new server
	s.ok(http.StatusOK, http.MethodGet, "/api/v1/alerts?rule=SimGPULoad", admin, nil, &list)
	require.Equal(t, 1, list.Total, "no instance lost or duplicated")
	require.Equal(t, "ACKNOWLEDGED", list.Items[0].State)
	require.Equal(t, []string{"firing:" + id}, hook.received(), "nothing sent twice")

	gen.set(nil, 0.2)
	require.Eventually(t, func() bool {
		s.ok(http.StatusOK, http.MethodGet, "/api/v1/alerts?rule=SimGPULoad", admin, nil, &list)
		return list.Items[0].State == "RESOLVED"
	}, 15*time.Second, 200*time.Millisecond, "the load fell: RESOLVED")
	require.Eventually(t, func() bool { return len(hook.received()) == 2 }, 15*time.Second, 100*time.Millisecond)
	require.Equal(t, []string{"firing:" + id, "resolved:" + id}, hook.received())
	require.Empty(t, hook.errs, "every delivery was signed")
	am.Wait(t, 20*time.Second, func(a []alerttest.Alert) bool { return a[len(a)-1].Status == "resolved" })
	s.ok(http.StatusOK, http.MethodGet, "/api/v1/alerts?rule=SimGPULoad", admin, nil, &list)
	require.Equal(t, 1, list.Total)
}
