package storesql

import (
	"context"
	"fmt"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

// Silences, notification channels and the notification outbox.

func (q Queries) scanSilence(row Row) (*controlplane.Silence, error) {
	var s controlplane.Silence
	var matchers string
	d := q.db
	if err := row.Scan(&s.ID, &s.Tenant, &matchers, d.ScanTime(&s.StartsAt), d.ScanTime(&s.EndsAt), &s.Comment,
		&s.CreatedBy, d.ScanTime(&s.CreatedAt)); err != nil {
		return nil, err
	}
	return &s, storeutil.FromJSONText(matchers, &s.Matchers)
}

// CreateSilence stores s.
func (q Queries) CreateSilence(ctx context.Context, s *controlplane.Silence) error {
	if err := s.Validate(); err != nil {
		return err
	}
	s.CreatedAt = q.db.Now()
	s.StartsAt, s.EndsAt = storeutil.Trunc(s.StartsAt), storeutil.Trunc(s.EndsAt)
	return q.db.Write(ctx, func(c Conn) error {
		return c.QueryRow(ctx, `INSERT INTO alert_silences (tenant, matchers, starts_at, ends_at, comment, created_by, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`, s.Tenant, storeutil.JSONText(s.Matchers), q.db.Time(s.StartsAt),
			q.db.Time(s.EndsAt), s.Comment, s.CreatedBy, q.db.Time(s.CreatedAt)).Scan(&s.ID)
	})
}

// ListSilences returns every silence, newest first.
func (q Queries) ListSilences(ctx context.Context) ([]*controlplane.Silence, error) {
	return all(ctx, q.db.Reader(), q.scanSilence, `SELECT id, tenant, matchers, starts_at, ends_at, comment, created_by, created_at
		FROM alert_silences ORDER BY id DESC`)
}

// ExpireSilence implements controlplane.AlertStore: the silence ends at at
// unless it already ended earlier.
func (q Queries) ExpireSilence(ctx context.Context, id int64, at time.Time) error {
	return q.db.Write(ctx, func(c Conn) error {
		var one int
		if err := c.QueryRow(ctx, `SELECT 1 FROM alert_silences WHERE id = $1`, id).Scan(&one); err != nil {
			return fmt.Errorf("silence %d: %w", id, err)
		}
		_, err := c.Exec(ctx, `UPDATE alert_silences SET ends_at = $1 WHERE id = $2 AND ends_at > $1`,
			q.db.Time(storeutil.Trunc(at)), id)
		return err
	})
}

const channelCols = `id, name, type, config, levels, tenant, enabled, send_resolved, created_at, updated_at`

func (q Queries) scanChannel(row Row) (*controlplane.NotifyChannel, error) {
	var c controlplane.NotifyChannel
	var cfg, levels string
	if err := row.Scan(&c.ID, &c.Name, &c.Type, &cfg, &levels, &c.Tenant, &c.Enabled, &c.SendResolved,
		q.db.ScanTime(&c.CreatedAt), q.db.ScanTime(&c.UpdatedAt)); err != nil {
		return nil, err
	}
	if err := storeutil.FromJSONText(cfg, &c.Config); err != nil {
		return nil, err
	}
	return &c, storeutil.FromJSONText(levels, &c.Levels)
}

func levelsText(l []controlplane.AlertLevel) string {
	if l == nil {
		l = []controlplane.AlertLevel{}
	}
	return storeutil.JSONText(l)
}

// CreateChannel stores c; ErrConflict when the name is taken.
func (q Queries) CreateChannel(ctx context.Context, ch *controlplane.NotifyChannel) error {
	if err := ch.Validate(); err != nil {
		return err
	}
	now := q.db.Now()
	ch.CreatedAt, ch.UpdatedAt = now, now
	return q.db.Write(ctx, func(c Conn) error {
		err := c.QueryRow(ctx, `INSERT INTO alert_channels (name, type, config, levels, tenant, enabled, send_resolved,
			created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) RETURNING id`, ch.Name, ch.Type,
			storeutil.JSONText(ch.Config), levelsText(ch.Levels), ch.Tenant, ch.Enabled, ch.SendResolved, q.db.Time(now)).Scan(&ch.ID)
		if err != nil {
			return fmt.Errorf("channel %s: %w", ch.Name, err)
		}
		return nil
	})
}

// GetChannel returns one channel.
func (q Queries) GetChannel(ctx context.Context, id int64) (*controlplane.NotifyChannel, error) {
	c, err := q.scanChannel(q.db.Reader().QueryRow(ctx, `SELECT `+channelCols+` FROM alert_channels WHERE id = $1`, id))
	if err != nil {
		return nil, fmt.Errorf("channel %d: %w", id, err)
	}
	return c, nil
}

// ListChannels returns every channel by id.
func (q Queries) ListChannels(ctx context.Context) ([]*controlplane.NotifyChannel, error) {
	return all(ctx, q.db.Reader(), q.scanChannel, `SELECT `+channelCols+` FROM alert_channels ORDER BY id`)
}

// UpdateChannel rewrites c.
func (q Queries) UpdateChannel(ctx context.Context, ch *controlplane.NotifyChannel) error {
	if err := ch.Validate(); err != nil {
		return err
	}
	now := q.db.Now()
	return q.db.Write(ctx, func(c Conn) error {
		n, err := c.Exec(ctx, `UPDATE alert_channels SET name = $1, type = $2, config = $3, levels = $4, tenant = $5,
			enabled = $6, send_resolved = $7, updated_at = $8 WHERE id = $9`, ch.Name, ch.Type, storeutil.JSONText(ch.Config),
			levelsText(ch.Levels), ch.Tenant, ch.Enabled, ch.SendResolved, q.db.Time(now), ch.ID)
		if err == nil && n > 0 {
			ch.UpdatedAt = now
		}
		return affected(n, err, fmt.Sprintf("channel %d", ch.ID))
	})
}

// DeleteChannel removes a channel and its outbox rows.
func (q Queries) DeleteChannel(ctx context.Context, id int64) error {
	return q.db.Write(ctx, func(c Conn) error {
		n, err := c.Exec(ctx, `DELETE FROM alert_channels WHERE id = $1`, id)
		return affected(n, err, fmt.Sprintf("channel %d", id))
	})
}

const notificationCols = `id, channel_id, alert_id, kind, status, attempts, next_attempt, last_error, created_at, delivered_at`

func (q Queries) scanNotification(row Row) (*controlplane.Notification, error) {
	var n controlplane.Notification
	d := q.db
	if err := row.Scan(&n.ID, &n.ChannelID, &n.AlertID, &n.Kind, &n.Status, &n.Attempts, d.ScanTime(&n.NextAttempt),
		&n.LastError, d.ScanTime(&n.CreatedAt), d.ScanNullTime(&n.DeliveredAt)); err != nil {
		return nil, err
	}
	return &n, nil
}

// EnqueueNotification implements controlplane.AlertStore.
func (q Queries) EnqueueNotification(ctx context.Context, n *controlplane.Notification) error {
	now := q.db.Now()
	n.Status, n.CreatedAt, n.NextAttempt = controlplane.DeliveryPending, now, now
	return q.db.Write(ctx, func(c Conn) error {
		return c.QueryRow(ctx, `INSERT INTO alert_notifications (channel_id, alert_id, kind, status, next_attempt, created_at)
			VALUES ($1, $2, $3, $4, $5, $5) RETURNING id`, n.ChannelID, n.AlertID, n.Kind, n.Status, q.db.Time(now)).Scan(&n.ID)
	})
}

// DueNotifications implements controlplane.AlertStore.
func (q Queries) DueNotifications(ctx context.Context, now time.Time, limit int) ([]*controlplane.Notification, error) {
	return all(ctx, q.db.Reader(), q.scanNotification, `SELECT `+notificationCols+` FROM alert_notifications
		WHERE status = $1 AND next_attempt <= $2 ORDER BY next_attempt, id LIMIT $3`,
		controlplane.DeliveryPending, q.db.Time(now), limit)
}

// MarkNotification implements controlplane.AlertStore.
func (q Queries) MarkNotification(ctx context.Context, id int64, delivered bool, errText string, next time.Time, final bool, at time.Time) error {
	status := controlplane.DeliveryPending
	var deliveredAt *time.Time
	switch {
	case delivered:
		t := storeutil.Trunc(at)
		status, deliveredAt = controlplane.DeliveryDelivered, &t
	case final:
		status = controlplane.DeliveryFailed
	}
	return q.db.Write(ctx, func(c Conn) error {
		n, err := c.Exec(ctx, `UPDATE alert_notifications SET status = $1, attempts = attempts + 1, next_attempt = $2,
			last_error = $3, delivered_at = $4 WHERE id = $5`, status, q.db.Time(storeutil.Trunc(next)), errText,
			q.db.NullTime(deliveredAt), id)
		return affected(n, err, fmt.Sprintf("notification %d", id))
	})
}

// ListNotifications implements controlplane.AlertStore.
func (q Queries) ListNotifications(ctx context.Context, f controlplane.NotificationFilter) ([]*controlplane.Notification, int, error) {
	p := f.Page.Normalize()
	a := q.args()
	where := storeutil.NotificationWhere(f, a)
	var out []*controlplane.Notification
	var total int
	err := q.db.ReadTx(ctx, func(c Conn) error {
		if err := c.QueryRow(ctx, `SELECT COUNT(*) FROM alert_notifications`+where, a.Vals...).Scan(&total); err != nil {
			return err
		}
		lim, off := a.Add(p.Limit), a.Add(p.Offset)
		var err error
		out, err = all(ctx, c, q.scanNotification, `SELECT `+notificationCols+` FROM alert_notifications`+where+
			` ORDER BY id DESC LIMIT `+lim+` OFFSET `+off, a.Vals...)
		return err
	})
	return out, total, err
}
