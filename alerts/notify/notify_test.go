package notify_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/alerts/notify"
	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/sqlite"
)

type fixture struct {
	t     *testing.T
	store *sqlite.DB
	now   time.Time
	w     *notify.Worker
}

func newFixture(t *testing.T) *fixture {
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "hf.db"), sqlite.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	f := &fixture{t: t, store: st, now: time.Now().UTC().Add(time.Minute)} // rows are queued on the store's clock
	f.w = &notify.Worker{Store: st, Now: func() time.Time { return f.now }, Logger: slog.New(slog.DiscardHandler),
		ExternalURL: "http://console.example:5173"}
	return f
}

// fire opens an ERROR alert routed to ch and returns it.
func (f *fixture) fire(ch *controlplane.NotifyChannel) *controlplane.AlertInstance {
	require.NoError(f.t, notify.CheckConfig(ch))
	require.NoError(f.t, f.store.CreateChannel(f.t.Context(), ch))
	a, _, err := f.store.OpenAlert(f.t.Context(), &controlplane.AlertInstance{Fingerprint: "fp-" + ch.Name, Rule: "GPUHighLoad",
		Level: controlplane.AlertError, Node: "gpu-1",
		Labels:      map[string]string{"alertname": "GPUHighLoad", "severity": "ERROR", "host_name": "gpu-1", "hw_index": "0"},
		Annotations: map[string]string{"summary": "GPU 0 on gpu-1 saturated at 99%", "summary_zh": "节点 gpu-1 的 GPU 0 负载饱和 99%"},
		Value:       0.99, ActiveAt: time.Now().Add(-10 * time.Minute), FiredAt: time.Now()}, []int64{ch.ID})
	require.NoError(f.t, err)
	return a
}

func (f *fixture) notifications(ch *controlplane.NotifyChannel) []*controlplane.Notification {
	ns, _, err := f.store.ListNotifications(f.t.Context(), controlplane.NotificationFilter{ChannelID: ch.ID})
	require.NoError(f.t, err)
	return ns
}

// robot is an httptest server that checks each request as the vendor
// documents it and records the decoded body.
type robot struct {
	mu     sync.Mutex
	bodies []map[string]any
	srv    *httptest.Server
}

func newRobot(t *testing.T, verify func(r *http.Request, body []byte) (int, string)) *robot {
	rb := &robot{}
	rb.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		code, answer := verify(r, body)
		if code == http.StatusOK {
			var m map[string]any
			_ = json.Unmarshal(body, &m)
			rb.mu.Lock()
			rb.bodies = append(rb.bodies, m)
			rb.mu.Unlock()
		}
		w.WriteHeader(code)
		_, _ = io.WriteString(w, answer)
	}))
	t.Cleanup(rb.srv.Close)
	return rb
}

func (rb *robot) got() []map[string]any {
	rb.mu.Lock()
	defer rb.mu.Unlock()
	return append([]map[string]any(nil), rb.bodies...)
}

func hmacB64(key, msg string) string {
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte(msg))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

const secret = "SECtest0123456789"

// TestRobots: every robot receives its vendor's message format with a
// signature the receiver verifies as the vendor documents it.
func TestRobots(t *testing.T) {
	cases := []struct {
		name   string
		typ    string
		verify func(t *testing.T, r *http.Request, body []byte) (int, string)
		check  func(t *testing.T, body map[string]any)
	}{
		{"dingtalk", controlplane.ChannelDingTalk,
			// DingTalk: timestamp (ms) and sign = urlencode(base64(HmacSHA256(secret, timestamp+"\n"+secret))) in the query.
			func(t *testing.T, r *http.Request, _ []byte) (int, string) {
				ts := r.URL.Query().Get("timestamp")
				ms, err := strconv.ParseInt(ts, 10, 64)
				if err != nil || time.Since(time.UnixMilli(ms)).Abs() > time.Hour {
					return 200, `{"errcode":310000,"errmsg":"invalid timestamp"}`
				}
				if r.URL.Query().Get("access_token") != "tok" || r.URL.Query().Get("sign") != hmacB64(secret, ts+"\n"+secret) {
					return 200, `{"errcode":310000,"errmsg":"sign not match"}`
				}
				return 200, `{"errcode":0,"errmsg":"ok"}`
			},
			func(t *testing.T, b map[string]any) {
				require.Equal(t, "markdown", b["msgtype"])
				md := b["markdown"].(map[string]any)
				require.Equal(t, "[ERROR] GPUHighLoad 触发 FIRING", md["title"])
				require.Contains(t, md["text"], "节点 gpu-1 的 GPU 0 负载饱和 99%")
				require.Contains(t, md["text"], "http://console.example:5173/alerts?id=")
			}},
		{"wecom", controlplane.ChannelWeCom,
			func(t *testing.T, r *http.Request, _ []byte) (int, string) {
				if r.URL.Query().Get("key") != "tok" {
					return 200, `{"errcode":93000,"errmsg":"invalid webhook url"}`
				}
				return 200, `{"errcode":0,"errmsg":"ok"}`
			},
			func(t *testing.T, b map[string]any) {
				require.Equal(t, "markdown", b["msgtype"])
				require.Contains(t, b["markdown"].(map[string]any)["content"], "GPU 0 on gpu-1 saturated at 99%")
			}},
		{"feishu", controlplane.ChannelFeishu,
			// Feishu: sign = base64(HmacSHA256 keyed with timestamp+"\n"+secret over an empty message), timestamp in seconds.
			func(t *testing.T, _ *http.Request, body []byte) (int, string) {
				var m struct{ Timestamp, Sign string }
				_ = json.Unmarshal(body, &m)
				s, err := strconv.ParseInt(m.Timestamp, 10, 64)
				if err != nil || time.Since(time.Unix(s, 0)).Abs() > time.Hour || m.Sign != hmacB64(m.Timestamp+"\n"+secret, "") {
					return 200, `{"code":19021,"msg":"sign match fail or timestamp is not within one hour from current time"}`
				}
				return 200, `{"code":0,"msg":"success","data":{}}`
			},
			func(t *testing.T, b map[string]any) {
				require.Equal(t, "interactive", b["msg_type"])
				card := b["card"].(map[string]any)
				require.Equal(t, "red", card["header"].(map[string]any)["template"])
				require.Contains(t, card["elements"].([]any)[0].(map[string]any)["text"].(map[string]any)["content"], "gpu-1")
			}},
		{"webhook", controlplane.ChannelWebhook,
			func(t *testing.T, r *http.Request, body []byte) (int, string) {
				ts := r.Header.Get(notify.HeaderTimestamp)
				m := hmac.New(sha256.New, []byte(secret))
				m.Write([]byte(ts + "."))
				m.Write(body)
				want := "sha256=" + hexString(m.Sum(nil))
				if ts == "" || !hmac.Equal([]byte(r.Header.Get(notify.HeaderSignature)), []byte(want)) {
					return http.StatusUnauthorized, "bad signature"
				}
				return 200, "ok"
			},
			func(t *testing.T, b map[string]any) {
				require.Equal(t, "firing", b["kind"])
				a := b["alert"].(map[string]any)
				require.Equal(t, "GPUHighLoad", a["rule"])
				require.Equal(t, "ERROR", a["level"])
				require.Equal(t, "gpu-1", a["labels"].(map[string]any)["host_name"])
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			rb := newRobot(t, func(r *http.Request, body []byte) (int, string) { return c.verify(t, r, body) })
			good := &controlplane.NotifyChannel{Name: c.name, Type: c.typ, Enabled: true,
				Config: map[string]string{"url": rb.srv.URL + "/send?access_token=tok&key=tok", "secret": secret}}
			f.fire(good)
			n, err := f.w.Flush(t.Context())
			require.NoError(t, err)
			require.Equal(t, 1, n)
			require.Equal(t, controlplane.DeliveryDelivered, f.notifications(good)[0].Status)
			require.Len(t, rb.got(), 1)
			c.check(t, rb.got()[0])

			// A wrong secret is refused by the receiver: the row records why
			// and waits for its retry.
			bad := &controlplane.NotifyChannel{Name: c.name + "-bad", Type: c.typ, Enabled: true,
				Config: map[string]string{"url": rb.srv.URL + "/send?access_token=tok&key=nope", "secret": "wrong"}}
			f.fire(bad)
			n, err = f.w.Flush(t.Context())
			require.NoError(t, err)
			require.Zero(t, n)
			row := f.notifications(bad)[0]
			require.Equal(t, controlplane.DeliveryPending, row.Status)
			require.NotEmpty(t, row.LastError)
			require.Equal(t, 1, row.Attempts)
		})
	}
}

func hexString(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 2*len(b))
	for i, v := range b {
		out[2*i], out[2*i+1] = digits[v>>4], digits[v&15]
	}
	return string(out)
}

// TestRetryBackoff: a receiver that is down keeps the notification; it is
// retried with growing waits and delivered once the receiver is back; a
// receiver that never answers ends failed with the error visible.
func TestRetryBackoff(t *testing.T) {
	f := newFixture(t)
	var mu sync.Mutex
	down := true
	rb := newRobot(t, func(*http.Request, []byte) (int, string) {
		mu.Lock()
		defer mu.Unlock()
		if down {
			return http.StatusServiceUnavailable, "maintenance"
		}
		return 200, "ok"
	})
	ch := &controlplane.NotifyChannel{Name: "hook", Type: controlplane.ChannelWebhook, Enabled: true, Config: map[string]string{"url": rb.srv.URL}}
	f.fire(ch)
	for i, wait := range []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second} {
		_, err := f.w.Flush(t.Context())
		require.NoError(t, err)
		row := f.notifications(ch)[0]
		require.Equal(t, i+1, row.Attempts)
		require.Equal(t, "HTTP 503: maintenance", row.LastError)
		require.WithinDuration(t, f.now.Add(wait), row.NextAttempt, time.Millisecond)
		f.now = f.now.Add(time.Second)
		n, err := f.w.Flush(t.Context())
		require.NoError(t, err)
		require.Zero(t, n, "not before the backoff ends")
		f.now = row.NextAttempt
	}
	mu.Lock()
	down = false
	mu.Unlock()
	n, err := f.w.Flush(t.Context())
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, controlplane.DeliveryDelivered, f.notifications(ch)[0].Status)

	// Nothing listens here: after MaxAttempts the row is failed for good.
	dead := &controlplane.NotifyChannel{Name: "dead", Type: controlplane.ChannelWebhook, Enabled: true,
		Config: map[string]string{"url": "http://127.0.0.1:1/hook"}}
	f.fire(dead)
	f.w.MaxAttempts = 2
	for range 2 {
		_, err = f.w.Flush(t.Context())
		require.NoError(t, err)
		f.now = f.now.Add(time.Hour)
	}
	row := f.notifications(dead)[0]
	require.Equal(t, controlplane.DeliveryFailed, row.Status)
	require.Contains(t, row.LastError, "connection refused")
}

// TestCheckConfig: bad channel configurations are refused with the reason.
func TestCheckConfig(t *testing.T) {
	for _, c := range []struct {
		ch   controlplane.NotifyChannel
		want string
	}{
		{controlplane.NotifyChannel{Name: "x", Type: "pager"}, "unknown channel type"},
		{controlplane.NotifyChannel{Name: "x", Type: controlplane.ChannelWebhook}, "config.url"},
		{controlplane.NotifyChannel{Name: "x", Type: controlplane.ChannelDingTalk, Config: map[string]string{"url": "ftp://x"}}, "http(s) URL"},
		{controlplane.NotifyChannel{Name: "x", Type: controlplane.ChannelEmail, Config: map[string]string{"smtp_host": "mail", "from": "a@b", "to": "c@d"}}, "host:port"},
	} {
		err := notify.CheckConfig(&c.ch)
		require.ErrorIs(t, err, controlplane.ErrInvalid)
		require.ErrorContains(t, err, c.want)
	}
}
