package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

var _ controlplane.AlertStore = (*DB)(nil)

const ruleCols = `id, tenant, name, expr, for_ms, keep_firing_ms, level, labels, annotations, enabled, created_by, created_at, updated_at`

func scanRule(row pgx.Row) (*controlplane.AlertRule, error) {
	var r controlplane.AlertRule
	var forMS, keepMS int64
	var labels, ann string
	if err := row.Scan(&r.ID, &r.Tenant, &r.Name, &r.Expr, &forMS, &keepMS, &r.Level, &labels, &ann, &r.Enabled,
		&r.CreatedBy, &r.CreatedAt, &r.UpdatedAt); err != nil {
		return nil, mapErr(err)
	}
	r.For, r.KeepFiringFor = time.Duration(forMS)*time.Millisecond, time.Duration(keepMS)*time.Millisecond
	r.CreatedAt, r.UpdatedAt = utc(r.CreatedAt), utc(r.UpdatedAt)
	if err := storeutil.FromJSONText(labels, &r.Labels); err != nil {
		return nil, err
	}
	return &r, storeutil.FromJSONText(ann, &r.Annotations)
}

func collect[T any](rows pgx.Rows, err error, scan func(pgx.Row) (T, error)) ([]T, error) {
	if err != nil {
		return nil, mapErr(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (T, error) { return scan(r) })
	return out, mapErr(err)
}

// CreateAlertRule inserts r; ErrConflict when (tenant, name) exists.
func (db *DB) CreateAlertRule(ctx context.Context, r *controlplane.AlertRule) error {
	if err := r.Validate(); err != nil {
		return err
	}
	now := db.now()
	r.CreatedAt, r.UpdatedAt = now, now
	err := db.pool.QueryRow(ctx, `INSERT INTO alert_rules (tenant, name, expr, for_ms, keep_firing_ms, level,
		labels, annotations, enabled, created_by, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11) RETURNING id`,
		r.Tenant, r.Name, r.Expr, r.For.Milliseconds(), r.KeepFiringFor.Milliseconds(), string(r.Level),
		storeutil.JSONText(r.Labels), storeutil.JSONText(r.Annotations), r.Enabled, r.CreatedBy, now).Scan(&r.ID)
	if err != nil {
		return fmt.Errorf("alert rule %s/%s: %w", r.Tenant, r.Name, mapErr(err))
	}
	return nil
}

// GetAlertRule returns one custom rule.
func (db *DB) GetAlertRule(ctx context.Context, id int64) (*controlplane.AlertRule, error) {
	r, err := scanRule(db.pool.QueryRow(ctx, `SELECT `+ruleCols+` FROM alert_rules WHERE id = $1`, id))
	if err != nil {
		return nil, fmt.Errorf("alert rule %d: %w", id, err)
	}
	return r, nil
}

// ListAlertRules returns every custom rule by id.
func (db *DB) ListAlertRules(ctx context.Context) ([]*controlplane.AlertRule, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+ruleCols+` FROM alert_rules ORDER BY id`)
	return collect(rows, err, scanRule)
}

// UpdateAlertRule rewrites r (all fields but the creator and creation time).
func (db *DB) UpdateAlertRule(ctx context.Context, r *controlplane.AlertRule) error {
	if err := r.Validate(); err != nil {
		return err
	}
	now := db.now()
	tag, err := db.pool.Exec(ctx, `UPDATE alert_rules SET tenant = $1, name = $2, expr = $3, for_ms = $4, keep_firing_ms = $5,
		level = $6, labels = $7, annotations = $8, enabled = $9, updated_at = $10 WHERE id = $11`,
		r.Tenant, r.Name, r.Expr, r.For.Milliseconds(), r.KeepFiringFor.Milliseconds(), string(r.Level),
		storeutil.JSONText(r.Labels), storeutil.JSONText(r.Annotations), r.Enabled, now, r.ID)
	if err != nil {
		return fmt.Errorf("alert rule %d: %w", r.ID, mapErr(err))
	}
	r.UpdatedAt = now
	return affected(tag, fmt.Sprintf("alert rule %d", r.ID))
}

// DeleteAlertRule removes a custom rule (its past instances stay).
func (db *DB) DeleteAlertRule(ctx context.Context, id int64) error {
	tag, err := db.pool.Exec(ctx, `DELETE FROM alert_rules WHERE id = $1`, id)
	if err != nil {
		return mapErr(err)
	}
	return affected(tag, fmt.Sprintf("alert rule %d", id))
}

const alertCols = `id, fingerprint, rule, rule_id, tenant, node, level, state, labels, annotations, value, silenced,
	active_at, fired_at, acked_at, acked_by, ack_comment, resolved_at, resolved_by, resolution, updated_at`

func scanAlert(row pgx.Row) (*controlplane.AlertInstance, error) {
	var a controlplane.AlertInstance
	var labels, ann string
	if err := row.Scan(&a.ID, &a.Fingerprint, &a.Rule, &a.RuleID, &a.Tenant, &a.Node, &a.Level, &a.State, &labels, &ann,
		&a.Value, &a.Silenced, &a.ActiveAt, &a.FiredAt, &a.AckedAt, &a.AckedBy, &a.AckComment, &a.ResolvedAt, &a.ResolvedBy,
		&a.Resolution, &a.UpdatedAt); err != nil {
		return nil, mapErr(err)
	}
	a.ActiveAt, a.FiredAt, a.UpdatedAt = utc(a.ActiveAt), utc(a.FiredAt), utc(a.UpdatedAt)
	a.AckedAt, a.ResolvedAt = utcPtr(a.AckedAt), utcPtr(a.ResolvedAt)
	if err := storeutil.FromJSONText(labels, &a.Labels); err != nil {
		return nil, err
	}
	return &a, storeutil.FromJSONText(ann, &a.Annotations)
}

func getAlertTx(ctx context.Context, tx pgx.Tx, id int64) (*controlplane.AlertInstance, error) {
	a, err := scanAlert(tx.QueryRow(ctx, `SELECT `+alertCols+` FROM alerts WHERE id = $1`, id))
	if err != nil {
		return nil, fmt.Errorf("alert %d: %w", id, err)
	}
	return a, nil
}

func alertEventTx(ctx context.Context, tx pgx.Tx, id int64, state controlplane.AlertState, actor, comment string, at time.Time) error {
	_, err := tx.Exec(ctx, `INSERT INTO alert_events (alert_id, state, actor, comment, at) VALUES ($1, $2, $3, $4, $5)`,
		id, string(state), actor, comment, at)
	return mapErr(err)
}

func enqueueTx(ctx context.Context, tx pgx.Tx, alertID int64, kind string, channels []int64, at time.Time) error {
	for _, ch := range channels {
		if _, err := tx.Exec(ctx, `INSERT INTO alert_notifications (channel_id, alert_id, kind, status, next_attempt, created_at)
			VALUES ($1, $2, $3, $4, $5, $5)`, ch, alertID, kind, controlplane.DeliveryPending, at); err != nil {
			return fmt.Errorf("queue notification for channel %d: %w", ch, mapErr(err))
		}
	}
	return nil
}

// OpenAlert implements controlplane.AlertStore. The unique open_fingerprint
// makes two servers racing to open the same alert leave one instance.
func (db *DB) OpenAlert(ctx context.Context, a *controlplane.AlertInstance, notify []int64) (*controlplane.AlertInstance, bool, error) {
	if !a.Level.Valid() || a.Fingerprint == "" || a.Rule == "" {
		return nil, false, controlplane.Invalidf("alert needs a fingerprint, a rule and a level")
	}
	now := db.now()
	var out *controlplane.AlertInstance
	created := false
	err := db.tx(ctx, func(tx pgx.Tx) error {
		var id int64
		fired := storeutil.Trunc(a.FiredAt)
		err := tx.QueryRow(ctx, `INSERT INTO alerts (fingerprint, open_fingerprint, rule, rule_id, tenant, node, level, state,
			labels, annotations, value, silenced, active_at, fired_at, updated_at)
			VALUES ($1, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
			ON CONFLICT (open_fingerprint) DO NOTHING RETURNING id`,
			a.Fingerprint, a.Rule, a.RuleID, a.Tenant, a.Node, string(a.Level), string(controlplane.AlertActive),
			storeutil.JSONText(a.Labels), storeutil.JSONText(a.Annotations), a.Value, a.Silenced,
			storeutil.Trunc(a.ActiveAt), fired, now).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) {
			out, err = scanAlert(tx.QueryRow(ctx, `SELECT `+alertCols+` FROM alerts WHERE open_fingerprint = $1`, a.Fingerprint))
			return err
		}
		if err != nil {
			return fmt.Errorf("open alert %s: %w", a.Rule, mapErr(err))
		}
		if err := alertEventTx(ctx, tx, id, controlplane.AlertActive, "system", "", fired); err != nil {
			return err
		}
		if err := enqueueTx(ctx, tx, id, controlplane.NotifyFiring, notify, now); err != nil {
			return err
		}
		created = true
		out, err = getAlertTx(ctx, tx, id)
		return err
	})
	return out, created, err
}

// AckAlert implements controlplane.AlertStore.
func (db *DB) AckAlert(ctx context.Context, id int64, by, comment string, at time.Time) (*controlplane.AlertInstance, error) {
	at = storeutil.Trunc(at)
	var out *controlplane.AlertInstance
	err := db.tx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE alerts SET state = $1, acked_at = $2, acked_by = $3, ack_comment = $4, updated_at = $5
			WHERE id = $6 AND state = $7`, string(controlplane.AlertAcknowledged), at, by, comment, db.now(), id, string(controlplane.AlertActive))
		if err != nil {
			return mapErr(err)
		}
		if tag.RowsAffected() == 0 {
			if _, err := getAlertTx(ctx, tx, id); err != nil {
				return err
			}
			return fmt.Errorf("alert %d is not ACTIVE: %w", id, controlplane.ErrConflict)
		}
		if err := alertEventTx(ctx, tx, id, controlplane.AlertAcknowledged, by, comment, at); err != nil {
			return err
		}
		out, err = getAlertTx(ctx, tx, id)
		return err
	})
	return out, err
}

// ResolveAlert implements controlplane.AlertStore.
func (db *DB) ResolveAlert(ctx context.Context, id int64, by, reason string, at time.Time, notify []int64) (*controlplane.AlertInstance, error) {
	at = storeutil.Trunc(at)
	var out *controlplane.AlertInstance
	err := db.tx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE alerts SET state = $1, open_fingerprint = NULL, resolved_at = $2, resolved_by = $3,
			resolution = $4, updated_at = $5 WHERE id = $6 AND state <> $1`,
			string(controlplane.AlertResolved), at, by, reason, db.now(), id)
		if err != nil {
			return mapErr(err)
		}
		if tag.RowsAffected() == 0 {
			if _, err := getAlertTx(ctx, tx, id); err != nil {
				return err
			}
			return fmt.Errorf("alert %d is already RESOLVED: %w", id, controlplane.ErrConflict)
		}
		actor := by
		if actor == "" {
			actor = "system"
		}
		if err := alertEventTx(ctx, tx, id, controlplane.AlertResolved, actor, reason, at); err != nil {
			return err
		}
		if err := enqueueTx(ctx, tx, id, controlplane.NotifyResolved, notify, db.now()); err != nil {
			return err
		}
		out, err = getAlertTx(ctx, tx, id)
		return err
	})
	return out, err
}

// GetAlert returns one instance.
func (db *DB) GetAlert(ctx context.Context, id int64) (*controlplane.AlertInstance, error) {
	a, err := scanAlert(db.pool.QueryRow(ctx, `SELECT `+alertCols+` FROM alerts WHERE id = $1`, id))
	if err != nil {
		return nil, fmt.Errorf("alert %d: %w", id, err)
	}
	return a, nil
}

func alertArgs() *storeutil.Args {
	return &storeutil.Args{Numbered: true, Time: func(t time.Time) any { return t }}
}

// ListAlerts returns a page of instances, newest first, and the total.
func (db *DB) ListAlerts(ctx context.Context, f controlplane.AlertFilter) ([]*controlplane.AlertInstance, int, error) {
	if err := storeutil.CheckAlertFilter(f); err != nil {
		return nil, 0, err
	}
	p := f.Page.Normalize()
	a := alertArgs()
	where := storeutil.AlertWhere(f, a)
	var out []*controlplane.AlertInstance
	var total int
	err := db.readTx(ctx, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM alerts`+where, a.Vals...).Scan(&total); err != nil {
			return mapErr(err)
		}
		lim, off := a.Add(p.Limit), a.Add(p.Offset)
		rows, err := tx.Query(ctx, `SELECT `+alertCols+` FROM alerts`+where+` ORDER BY fired_at DESC, id DESC LIMIT `+lim+` OFFSET `+off, a.Vals...)
		out, err = collect(rows, err, scanAlert)
		return err
	})
	return out, total, err
}

// ListAlertEvents returns an instance's history, oldest first.
func (db *DB) ListAlertEvents(ctx context.Context, alertID int64) ([]*controlplane.AlertEvent, error) {
	rows, err := db.pool.Query(ctx, `SELECT id, alert_id, state, actor, comment, at FROM alert_events WHERE alert_id = $1 ORDER BY id`, alertID)
	return collect(rows, err, func(row pgx.Row) (*controlplane.AlertEvent, error) {
		var e controlplane.AlertEvent
		if err := row.Scan(&e.ID, &e.AlertID, &e.State, &e.Actor, &e.Comment, &e.At); err != nil {
			return nil, mapErr(err)
		}
		e.At = utc(e.At)
		return &e, nil
	})
}

// AlertStats implements controlplane.AlertStore.
func (db *DB) AlertStats(ctx context.Context, tenant *string, since, until time.Time) (*controlplane.AlertStats, error) {
	f := controlplane.AlertFilter{Tenant: tenant, Since: &since, Until: &until}
	a := alertArgs()
	rows, err := db.pool.Query(ctx, `SELECT `+alertCols+` FROM alerts`+storeutil.AlertWhere(f, a), a.Vals...)
	list, err := collect(rows, err, scanAlert)
	if err != nil {
		return nil, err
	}
	return controlplane.ComputeAlertStats(list), nil
}

func scanSilence(row pgx.Row) (*controlplane.Silence, error) {
	var s controlplane.Silence
	var matchers string
	if err := row.Scan(&s.ID, &s.Tenant, &matchers, &s.StartsAt, &s.EndsAt, &s.Comment, &s.CreatedBy, &s.CreatedAt); err != nil {
		return nil, mapErr(err)
	}
	s.StartsAt, s.EndsAt, s.CreatedAt = utc(s.StartsAt), utc(s.EndsAt), utc(s.CreatedAt)
	return &s, storeutil.FromJSONText(matchers, &s.Matchers)
}

// CreateSilence stores s.
func (db *DB) CreateSilence(ctx context.Context, s *controlplane.Silence) error {
	if err := s.Validate(); err != nil {
		return err
	}
	s.CreatedAt = db.now()
	s.StartsAt, s.EndsAt = storeutil.Trunc(s.StartsAt), storeutil.Trunc(s.EndsAt)
	return mapErr(db.pool.QueryRow(ctx, `INSERT INTO alert_silences (tenant, matchers, starts_at, ends_at, comment, created_by, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`, s.Tenant, storeutil.JSONText(s.Matchers), s.StartsAt, s.EndsAt,
		s.Comment, s.CreatedBy, s.CreatedAt).Scan(&s.ID))
}

// ListSilences returns every silence, newest first.
func (db *DB) ListSilences(ctx context.Context) ([]*controlplane.Silence, error) {
	rows, err := db.pool.Query(ctx, `SELECT id, tenant, matchers, starts_at, ends_at, comment, created_by, created_at
		FROM alert_silences ORDER BY id DESC`)
	return collect(rows, err, scanSilence)
}

// ExpireSilence implements controlplane.AlertStore.
func (db *DB) ExpireSilence(ctx context.Context, id int64, at time.Time) error {
	var exists bool
	if err := db.pool.QueryRow(ctx, `SELECT true FROM alert_silences WHERE id = $1`, id).Scan(&exists); err != nil {
		return fmt.Errorf("silence %d: %w", id, mapErr(err))
	}
	_, err := db.pool.Exec(ctx, `UPDATE alert_silences SET ends_at = $1 WHERE id = $2 AND ends_at > $1`, storeutil.Trunc(at), id)
	return mapErr(err)
}

const channelCols = `id, name, type, config, levels, tenant, enabled, send_resolved, created_at, updated_at`

func scanChannel(row pgx.Row) (*controlplane.NotifyChannel, error) {
	var c controlplane.NotifyChannel
	var cfg, levels string
	if err := row.Scan(&c.ID, &c.Name, &c.Type, &cfg, &levels, &c.Tenant, &c.Enabled, &c.SendResolved, &c.CreatedAt, &c.UpdatedAt); err != nil {
		return nil, mapErr(err)
	}
	c.CreatedAt, c.UpdatedAt = utc(c.CreatedAt), utc(c.UpdatedAt)
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
func (db *DB) CreateChannel(ctx context.Context, c *controlplane.NotifyChannel) error {
	if err := c.Validate(); err != nil {
		return err
	}
	now := db.now()
	c.CreatedAt, c.UpdatedAt = now, now
	err := db.pool.QueryRow(ctx, `INSERT INTO alert_channels (name, type, config, levels, tenant, enabled, send_resolved,
		created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) RETURNING id`, c.Name, c.Type, storeutil.JSONText(c.Config),
		levelsText(c.Levels), c.Tenant, c.Enabled, c.SendResolved, now).Scan(&c.ID)
	if err != nil {
		return fmt.Errorf("channel %s: %w", c.Name, mapErr(err))
	}
	return nil
}

// GetChannel returns one channel.
func (db *DB) GetChannel(ctx context.Context, id int64) (*controlplane.NotifyChannel, error) {
	c, err := scanChannel(db.pool.QueryRow(ctx, `SELECT `+channelCols+` FROM alert_channels WHERE id = $1`, id))
	if err != nil {
		return nil, fmt.Errorf("channel %d: %w", id, err)
	}
	return c, nil
}

// ListChannels returns every channel by id.
func (db *DB) ListChannels(ctx context.Context) ([]*controlplane.NotifyChannel, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+channelCols+` FROM alert_channels ORDER BY id`)
	return collect(rows, err, scanChannel)
}

// UpdateChannel rewrites c.
func (db *DB) UpdateChannel(ctx context.Context, c *controlplane.NotifyChannel) error {
	if err := c.Validate(); err != nil {
		return err
	}
	now := db.now()
	tag, err := db.pool.Exec(ctx, `UPDATE alert_channels SET name = $1, type = $2, config = $3, levels = $4, tenant = $5,
		enabled = $6, send_resolved = $7, updated_at = $8 WHERE id = $9`, c.Name, c.Type, storeutil.JSONText(c.Config),
		levelsText(c.Levels), c.Tenant, c.Enabled, c.SendResolved, now, c.ID)
	if err != nil {
		return fmt.Errorf("channel %d: %w", c.ID, mapErr(err))
	}
	c.UpdatedAt = now
	return affected(tag, fmt.Sprintf("channel %d", c.ID))
}

// DeleteChannel removes a channel and its outbox rows.
func (db *DB) DeleteChannel(ctx context.Context, id int64) error {
	tag, err := db.pool.Exec(ctx, `DELETE FROM alert_channels WHERE id = $1`, id)
	if err != nil {
		return mapErr(err)
	}
	return affected(tag, fmt.Sprintf("channel %d", id))
}

const notificationCols = `id, channel_id, alert_id, kind, status, attempts, next_attempt, last_error, created_at, delivered_at`

func scanNotification(row pgx.Row) (*controlplane.Notification, error) {
	var n controlplane.Notification
	if err := row.Scan(&n.ID, &n.ChannelID, &n.AlertID, &n.Kind, &n.Status, &n.Attempts, &n.NextAttempt, &n.LastError,
		&n.CreatedAt, &n.DeliveredAt); err != nil {
		return nil, mapErr(err)
	}
	n.NextAttempt, n.CreatedAt, n.DeliveredAt = utc(n.NextAttempt), utc(n.CreatedAt), utcPtr(n.DeliveredAt)
	return &n, nil
}

// EnqueueNotification implements controlplane.AlertStore.
func (db *DB) EnqueueNotification(ctx context.Context, n *controlplane.Notification) error {
	now := db.now()
	n.Status, n.CreatedAt, n.NextAttempt = controlplane.DeliveryPending, now, now
	return mapErr(db.pool.QueryRow(ctx, `INSERT INTO alert_notifications (channel_id, alert_id, kind, status, next_attempt, created_at)
		VALUES ($1, $2, $3, $4, $5, $5) RETURNING id`, n.ChannelID, n.AlertID, n.Kind, n.Status, now).Scan(&n.ID))
}

// DueNotifications implements controlplane.AlertStore.
func (db *DB) DueNotifications(ctx context.Context, now time.Time, limit int) ([]*controlplane.Notification, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+notificationCols+` FROM alert_notifications
		WHERE status = $1 AND next_attempt <= $2 ORDER BY next_attempt, id LIMIT $3`, controlplane.DeliveryPending, now, limit)
	return collect(rows, err, scanNotification)
}

// MarkNotification implements controlplane.AlertStore.
func (db *DB) MarkNotification(ctx context.Context, id int64, delivered bool, errText string, next time.Time, final bool, at time.Time) error {
	status := controlplane.DeliveryPending
	var deliveredAt *time.Time
	switch {
	case delivered:
		t := storeutil.Trunc(at)
		status, deliveredAt = controlplane.DeliveryDelivered, &t
	case final:
		status = controlplane.DeliveryFailed
	}
	tag, err := db.pool.Exec(ctx, `UPDATE alert_notifications SET status = $1, attempts = attempts + 1, next_attempt = $2,
		last_error = $3, delivered_at = $4 WHERE id = $5`, status, storeutil.Trunc(next), errText, deliveredAt, id)
	if err != nil {
		return mapErr(err)
	}
	return affected(tag, fmt.Sprintf("notification %d", id))
}

// ListNotifications implements controlplane.AlertStore.
func (db *DB) ListNotifications(ctx context.Context, f controlplane.NotificationFilter) ([]*controlplane.Notification, int, error) {
	p := f.Page.Normalize()
	a := alertArgs()
	where := storeutil.NotificationWhere(f, a)
	var out []*controlplane.Notification
	var total int
	err := db.readTx(ctx, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM alert_notifications`+where, a.Vals...).Scan(&total); err != nil {
			return mapErr(err)
		}
		lim, off := a.Add(p.Limit), a.Add(p.Offset)
		rows, err := tx.Query(ctx, `SELECT `+notificationCols+` FROM alert_notifications`+where+` ORDER BY id DESC LIMIT `+lim+` OFFSET `+off, a.Vals...)
		out, err = collect(rows, err, scanNotification)
		return err
	})
	return out, total, err
}
