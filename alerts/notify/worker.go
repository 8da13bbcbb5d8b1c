package notify

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	promrules "github.com/prometheus/prometheus/rules"

	"github.com/heteroflow/heteroflow/controlplane"
)

// Store is what delivery needs from persistence.
type Store interface {
	GetAlert(ctx context.Context, id int64) (*controlplane.AlertInstance, error)
	GetChannel(ctx context.Context, id int64) (*controlplane.NotifyChannel, error)
	ListChannels(ctx context.Context) ([]*controlplane.NotifyChannel, error)
	DueNotifications(ctx context.Context, now time.Time, limit int) ([]*controlplane.Notification, error)
	MarkNotification(ctx context.Context, id int64, delivered bool, errText string, next time.Time, final bool, at time.Time) error
}

// Worker delivers the outbox.
type Worker struct {
	Store  Store
	Client *http.Client // default: 10s timeout
	Logger *slog.Logger
	Now    func() time.Time
	// Leader: only one server delivers (the scheduler leader); nil = always.
	Leader      func() bool
	Interval    time.Duration // how often the outbox is read (default 2s)
	MaxAttempts int           // then the row is failed for good (default 12, ≈ 1h of retries)
	ExternalURL string

	mu   sync.Mutex // one Flush at a time
	wake chan struct{}
}

func (w *Worker) defaults() {
	if w.Client == nil {
		w.Client = &http.Client{Timeout: 10 * time.Second}
	}
	if w.Logger == nil {
		w.Logger = slog.Default()
	}
	if w.Now == nil {
		w.Now = time.Now
	}
	if w.Interval <= 0 {
		w.Interval = 2 * time.Second
	}
	if w.MaxAttempts <= 0 {
		w.MaxAttempts = 12
	}
}

// Wake asks Run to read the outbox now (after the engine queued rows).
func (w *Worker) Wake() {
	w.mu.Lock()
	ch := w.wake
	w.mu.Unlock()
	if ch != nil {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// Run delivers due notifications every Interval while leader.
func (w *Worker) Run(ctx context.Context) {
	w.defaults()
	w.mu.Lock()
	w.wake = make(chan struct{}, 1)
	wake := w.wake
	w.mu.Unlock()
	t := time.NewTicker(w.Interval)
	defer t.Stop()
	for {
		if w.Leader == nil || w.Leader() {
			if _, err := w.Flush(ctx); err != nil && ctx.Err() == nil {
				w.Logger.Warn("alert notifications", "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-wake:
		}
	}
}

// Flush delivers every due notification once and returns how many were
// delivered.
func (w *Worker) Flush(ctx context.Context) (int, error) {
	w.defaults()
	w.mu.Lock()
	defer w.mu.Unlock()
	delivered := 0
	for {
		due, err := w.Store.DueNotifications(ctx, w.Now(), 100)
		if err != nil || len(due) == 0 {
			return delivered, err
		}
		for _, n := range due {
			ok, err := w.deliver(ctx, n)
			if err != nil {
				return delivered, err
			}
			if ok {
				delivered++
			}
		}
	}
}

// deliver attempts one row and records the outcome; the error is the
// store's (the receiver's goes on the row).
func (w *Worker) deliver(ctx context.Context, n *controlplane.Notification) (bool, error) {
	ch, err := w.Store.GetChannel(ctx, n.ChannelID)
	if err != nil {
		return false, err
	}
	a, err := w.Store.GetAlert(ctx, n.AlertID)
	if err != nil {
		return false, err
	}
	now := w.Now()
	if !ch.Enabled {
		return false, w.Store.MarkNotification(ctx, n.ID, false, "channel disabled", now, true, now)
	}
	sendErr := send(ctx, w.Client, ch, Message{Kind: n.Kind, Alert: a, ExternalURL: w.ExternalURL, SentAt: now}, now)
	if sendErr == nil {
		return true, w.Store.MarkNotification(ctx, n.ID, true, "", now, false, now)
	}
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	attempts := n.Attempts + 1
	final := attempts >= w.MaxAttempts
	w.Logger.Warn("alert notification failed", "channel", ch.Name, "type", ch.Type, "alert", a.ID, "attempt", attempts,
		"final", final, "err", sendErr)
	return false, w.Store.MarkNotification(ctx, n.ID, false, truncate(sendErr.Error(), 500),
		now.Add(Backoff(attempts)), final, now)
}

// SendTest sends a test message to c at once (the console's "send test").
func (w *Worker) SendTest(ctx context.Context, c *controlplane.NotifyChannel) error {
	w.defaults()
	now := w.Now()
	a := &controlplane.AlertInstance{ID: 0, Rule: "HeteroFlowTestNotification", Level: controlplane.AlertInfo,
		State: controlplane.AlertActive, Labels: map[string]string{"alertname": "HeteroFlowTestNotification", "severity": "INFO"},
		Annotations: map[string]string{"summary": "Test notification from HeteroFlow", "summary_zh": "HeteroFlow 测试通知"},
		ActiveAt:    now, FiredAt: now}
	return send(ctx, w.Client, c, Message{Kind: controlplane.NotifyFiring, Alert: a, ExternalURL: w.ExternalURL, SentAt: now}, now)
}

// Resend forwards Prometheus' periodic notifications (firing alerts every
// resend delay, resolved ones once) to the enabled Alertmanager channels
// that route them, with endsAt = ValidUntil as Prometheus sends, so an
// Alertmanager keeps long-running alerts alive. Best effort: the outbox
// carries the state changes that must not be lost.
func (w *Worker) Resend(ctx context.Context, alerts []*promrules.Alert) {
	w.defaults()
	chans, err := w.Store.ListChannels(ctx)
	if err != nil {
		w.Logger.Warn("alertmanager resend", "err", err)
		return
	}
	for _, c := range chans {
		if c.Type != controlplane.ChannelAlertmanager || !c.Enabled {
			continue
		}
		var batch []amAlert
		for _, a := range alerts {
			lbl := a.Labels.Map()
			inst := &controlplane.AlertInstance{Tenant: lbl["tenant"], Level: controlplane.ParseAlertLevel(lbl["severity"])}
			if !c.Routes(inst) {
				continue
			}
			end := a.ValidUntil.UTC()
			if !a.ResolvedAt.IsZero() {
				end = a.ResolvedAt.UTC()
			}
			batch = append(batch, amAlert{Labels: lbl, Annotations: a.Annotations.Map(), StartsAt: a.FiredAt.UTC(), EndsAt: &end})
		}
		if len(batch) == 0 {
			continue
		}
		if err := postJSON(ctx, w.Client, strings.TrimRight(c.Config["url"], "/")+"/api/v2/alerts", batch, c, nil, nil); err != nil &&
			!errors.Is(err, context.Canceled) {
			w.Logger.Warn("alertmanager resend", "channel", c.Name, "err", err)
		}
	}
}

// Backoff is the wait before the next attempt after n failed ones: 5s
// doubling, at most 10 minutes.
func Backoff(n int) time.Duration {
	d := 5 * time.Second
	for i := 1; i < n && d < 10*time.Minute; i++ {
		d *= 2
	}
	return min(d, 10*time.Minute)
}
