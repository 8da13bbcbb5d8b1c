package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

var _ controlplane.AlertStore = (*DB)(nil)

const ruleCols = `id, tenant, name, expr, for_ms, keep_firing_ms, level, labels, annotations, enabled, created_by, created_at, updated_at`

func scanRule(row rowScanner) (*controlplane.AlertRule, error) {
	var r controlplane.AlertRule
	var forMS, keepMS, created, updated int64
	var labels, ann string
	if err := row.Scan(&r.ID, &r.Tenant, &r.Name, &r.Expr, &forMS, &keepMS, &r.Level, &labels, &ann, &r.Enabled,
		&r.CreatedBy, &created, &updated); err != nil {
		return nil, mapErr(err)
	}
	r.For, r.KeepFiringFor = time.Duration(forMS)*time.Millisecond, time.Duration(keepMS)*time.Millisecond
	r.CreatedAt, r.UpdatedAt = fromTS(created), fromTS(updated)
	if err := storeutil.FromJSONText(labels, &r.Labels); err != nil {
		return nil, err
	}
	return &r, storeutil.FromJSONText(ann, &r.Annotations)
}

// CreateAlertRule inserts r; ErrConflict when (tenant, name) exists.
func (db *DB) CreateAlertRule(ctx context.Context, r *controlplane.AlertRule) error {
	if err := r.Validate(); err != nil {
		return err
	}
	now := db.now()
	r.CreatedAt, r.UpdatedAt = now, now
	return db.write(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `INSERT INTO alert_rules (tenant, name, expr, for_ms, keep_firing_ms, level,
			labels, annotations, enabled, created_by, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			r.Tenant, r.Name, r.Expr, r.For.Milliseconds(), r.KeepFiringFor.Milliseconds(), r.Level,
			storeutil.JSONText(r.Labels), storeutil.JSONText(r.Annotations), r.Enabled, r.CreatedBy, ts(now), ts(now)).Scan(&r.ID)
		if err != nil {
			return fmt.Errorf("alert rule %s/%s: %w", r.Tenant, r.Name, mapErr(err))
		}
		return nil
	})
}

// GetAlertRule returns one custom rule.
func (db *DB) GetAlertRule(ctx context.Context, id int64) (*controlplane.AlertRule, error) {
	r, err := scanRule(db.r.QueryRowContext(ctx, `SELECT `+ruleCols+` FROM alert_rules WHERE id = ?`, id))
	if err != nil {
		return nil, fmt.Errorf("alert rule %d: %w", id, err)
	}
	return r, nil
}

// ListAlertRules returns every custom rule by id.
func (db *DB) ListAlertRules(ctx context.Context) ([]*controlplane.AlertRule, error) {
	return queryAll(ctx, db, scanRule, `SELECT `+ruleCols+` FROM alert_rules ORDER BY id`)
}

// UpdateAlertRule rewrites r (all fields but the creator and creation time).
func (db *DB) UpdateAlertRule(ctx context.Context, r *controlplane.AlertRule) error {
	if err := r.Validate(); err != nil {
		return err
	}
	now := db.now()
	return db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE alert_rules SET tenant = ?, name = ?, expr = ?, for_ms = ?, keep_firing_ms = ?,
			level = ?, labels = ?, annotations = ?, enabled = ?, updated_at = ? WHERE id = ?`,
			r.Tenant, r.Name, r.Expr, r.For.Milliseconds(), r.KeepFiringFor.Milliseconds(), r.Level,
			storeutil.JSONText(r.Labels), storeutil.JSONText(r.Annotations), r.Enabled, ts(now), r.ID)
		if err != nil {
			return fmt.Errorf("alert rule %d: %w", r.ID, mapErr(err))
		}
		r.UpdatedAt = now
		return affected(res, fmt.Sprintf("alert rule %d", r.ID))
	})
}

// DeleteAlertRule removes a custom rule (its past instances stay).
func (db *DB) DeleteAlertRule(ctx context.Context, id int64) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM alert_rules WHERE id = ?`, id)
		if err != nil {
			return mapErr(err)
		}
		return affected(res, fmt.Sprintf("alert rule %d", id))
	})
}

const alertCols = `id, fingerprint, rule, rule_id, tenant, node, level, state, labels, annotations, value, silenced,
	active_at, fired_at, acked_at, acked_by, ack_comment, resolved_at, resolved_by, resolution, updated_at`

func scanAlert(row rowScanner) (*controlplane.AlertInstance, error) {
	var a controlplane.AlertInstance
	var labels, ann string
	var active, fired, updated int64
	var acked, resolved sql.NullInt64
	if err := row.Scan(&a.ID, &a.Fingerprint, &a.Rule, &a.RuleID, &a.Tenant, &a.Node, &a.Level, &a.State, &labels, &ann,
		&a.Value, &a.Silenced, &active, &fired, &acked, &a.AckedBy, &a.AckComment, &resolved, &a.ResolvedBy,
		&a.Resolution, &updated); err != nil {
		return nil, mapErr(err)
	}
	a.ActiveAt, a.FiredAt, a.UpdatedAt = fromTS(active), fromTS(fired), fromTS(updated)
	a.AckedAt, a.ResolvedAt = fromNullTS(acked), fromNullTS(resolved)
	if err := storeutil.FromJSONText(labels, &a.Labels); err != nil {
		return nil, err
	}
	return &a, storeutil.FromJSONText(ann, &a.Annotations)
}

func getAlertTx(ctx context.Context, tx *sql.Tx, id int64) (*controlplane.AlertInstance, error) {
	a, err := scanAlert(tx.QueryRowContext(ctx, `SELECT `+alertCols+` FROM alerts WHERE id = ?`, id))
	if err != nil {
		return nil, fmt.Errorf("alert %d: %w", id, err)
	}
	return a, nil
}

func alertEventTx(ctx context.Context, tx *sql.Tx, id int64, state controlplane.AlertState, actor, comment string, at time.Time) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO alert_events (alert_id, state, actor, comment, at) VALUES (?, ?, ?, ?, ?)`,
		id, state, actor, comment, ts(at))
	return mapErr(err)
}

func enqueueTx(ctx context.Context, tx *sql.Tx, alertID int64, kind string, channels []int64, at time.Time) error {
	for _, ch := range channels {
		if _, err := tx.ExecContext(ctx, `INSERT INTO alert_notifications (channel_id, alert_id, kind, status, next_attempt, created_at)
			VALUES (?, ?, ?, ?, ?, ?)`, ch, alertID, kind, controlplane.DeliveryPending, ts(at), ts(at)); err != nil {
			return fmt.Errorf("queue notification for channel %d: %w", ch, mapErr(err))
		}
	}
	return nil
}

// OpenAlert implements controlplane.AlertStore.
func (db *DB) OpenAlert(ctx context.Context, a *controlplane.AlertInstance, notify []int64) (*controlplane.AlertInstance, bool, error) {
	if !a.Level.Valid() || a.Fingerprint == "" || a.Rule == "" {
		return nil, false, controlplane.Invalidf("alert needs a fingerprint, a rule and a level")
	}
	now := db.now()
	var out *controlplane.AlertInstance
	created := false
	err := db.write(ctx, func(tx *sql.Tx) error {
		var id int64
		err := tx.QueryRowContext(ctx, `SELECT id FROM alerts WHERE open_fingerprint = ?`, a.Fingerprint).Scan(&id)
		if err == nil {
			out, err = getAlertTx(ctx, tx, id)
			return err
		}
		if mapErr(err) != controlplane.ErrNotFound {
			return mapErr(err)
		}
		fired := storeutil.Trunc(a.FiredAt)
		err = tx.QueryRowContext(ctx, `INSERT INTO alerts (fingerprint, open_fingerprint, rule, rule_id, tenant, node, level, state,
			labels, annotations, value, silenced, active_at, fired_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			a.Fingerprint, a.Fingerprint, a.Rule, a.RuleID, a.Tenant, a.Node, a.Level, controlplane.AlertActive,
			storeutil.JSONText(a.Labels), storeutil.JSONText(a.Annotations), a.Value, a.Silenced,
			ts(a.ActiveAt), ts(fired), ts(now)).Scan(&id)
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
	err := db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE alerts SET state = ?, acked_at = ?, acked_by = ?, ack_comment = ?, updated_at = ?
			WHERE id = ? AND state = ?`, controlplane.AlertAcknowledged, ts(at), by, comment, ts(db.now()), id, controlplane.AlertActive)
		if err != nil {
			return mapErr(err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
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
	err := db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE alerts SET state = ?, open_fingerprint = NULL, resolved_at = ?, resolved_by = ?,
			resolution = ?, updated_at = ? WHERE id = ? AND state <> ?`,
			controlplane.AlertResolved, ts(at), by, reason, ts(db.now()), id, controlplane.AlertResolved)
		if err != nil {
			return mapErr(err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
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
	a, err := scanAlert(db.r.QueryRowContext(ctx, `SELECT `+alertCols+` FROM alerts WHERE id = ?`, id))
	if err != nil {
		return nil, fmt.Errorf("alert %d: %w", id, err)
	}
	return a, nil
}

func (db *DB) alertArgs() *storeutil.Args {
	return &storeutil.Args{Time: func(t time.Time) any { return ts(t) }}
}

// ListAlerts returns a page of instances, newest first, and the total.
func (db *DB) ListAlerts(ctx context.Context, f controlplane.AlertFilter) ([]*controlplane.AlertInstance, int, error) {
	if err := storeutil.CheckAlertFilter(f); err != nil {
		return nil, 0, err
	}
	p := f.Page.Normalize()
	a := db.alertArgs()
	where := storeutil.AlertWhere(f, a)
	var out []*controlplane.AlertInstance
	var total int
	err := db.read(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM alerts`+where, a.Vals...).Scan(&total); err != nil {
			return mapErr(err)
		}
		rows, err := tx.QueryContext(ctx, `SELECT `+alertCols+` FROM alerts`+where+` ORDER BY fired_at DESC, id DESC LIMIT ? OFFSET ?`,
			append(a.Vals, p.Limit, p.Offset)...)
		if err != nil {
			return mapErr(err)
		}
		defer rows.Close()
		for rows.Next() {
			al, err := scanAlert(rows)
			if err != nil {
				return err
			}
			out = append(out, al)
		}
		return mapErr(rows.Err())
	})
	return out, total, err
}

// ListAlertEvents returns an instance's history, oldest first.
func (db *DB) ListAlertEvents(ctx context.Context, alertID int64) ([]*controlplane.AlertEvent, error) {
	return queryAll(ctx, db, func(row rowScanner) (*controlplane.AlertEvent, error) {
		var e controlplane.AlertEvent
		var at int64
		if err := row.Scan(&e.ID, &e.AlertID, &e.State, &e.Actor, &e.Comment, &at); err != nil {
			return nil, mapErr(err)
		}
		e.At = fromTS(at)
		return &e, nil
	}, `SELECT id, alert_id, state, actor, comment, at FROM alert_events WHERE alert_id = ? ORDER BY id`, alertID)
}

// AlertStats implements controlplane.AlertStore.
func (db *DB) AlertStats(ctx context.Context, tenant *string, since, until time.Time) (*controlplane.AlertStats, error) {
	f := controlplane.AlertFilter{Tenant: tenant, Since: &since, Until: &until}
	a := db.alertArgs()
	rows, err := queryAll(ctx, db, scanAlert, `SELECT `+alertCols+` FROM alerts`+storeutil.AlertWhere(f, a), a.Vals...)
	if err != nil {
		return nil, err
	}
	return controlplane.ComputeAlertStats(rows), nil
}

func scanSilence(row rowScanner) (*controlplane.Silence, error) {
	var s controlplane.Silence
	var matchers string
	var starts, ends, created int64
	if err := row.Scan(&s.ID, &s.Tenant, &matchers, &starts, &ends, &s.Comment, &s.CreatedBy, &created); err != nil {
		return nil, mapErr(err)
	}
	s.StartsAt, s.EndsAt, s.CreatedAt = fromTS(starts), fromTS(ends), fromTS(created)
	return &s, storeutil.FromJSONText(matchers, &s.Matchers)
}

// CreateSilence stores s.
func (db *DB) CreateSilence(ctx context.Context, s *controlplane.Silence) error {
	if err := s.Validate(); err != nil {
		return err
	}
	s.CreatedAt = db.now()
	s.StartsAt, s.EndsAt = storeutil.Trunc(s.StartsAt), storeutil.Trunc(s.EndsAt)
	return db.write(ctx, func(tx *sql.Tx) error {
		return mapErr(tx.QueryRowContext(ctx, `INSERT INTO alert_silences (tenant, matchers, starts_at, ends_at, comment, created_by, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`, s.Tenant, storeutil.JSONText(s.Matchers), ts(s.StartsAt), ts(s.EndsAt),
			s.Comment, s.CreatedBy, ts(s.CreatedAt)).Scan(&s.ID))
	})
}

// ListSilences returns every silence, newest first.
func (db *DB) ListSilences(ctx context.Context) ([]*controlplane.Silence, error) {
	return queryAll(ctx, db, scanSilence, `SELECT id, tenant, matchers, starts_at, ends_at, comment, created_by, created_at
		FROM alert_silences ORDER BY id DESC`)
}

// ExpireSilence implements controlplane.AlertStore.
func (db *DB) ExpireSilence(ctx context.Context, id int64, at time.Time) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		var ends int64
		if err := tx.QueryRowContext(ctx, `SELECT ends_at FROM alert_silences WHERE id = ?`, id).Scan(&ends); err != nil {
			return fmt.Errorf("silence %d: %w", id, mapErr(err))
		}
		if ends <= ts(at) {
			return nil
		}
		_, err := tx.ExecContext(ctx, `UPDATE alert_silences SET ends_at = ? WHERE id = ?`, ts(storeutil.Trunc(at)), id)
		return mapErr(err)
	})
}

const channelCols = `id, name, type, config, levels, tenant, enabled, send_resolved, created_at, updated_at`

func scanChannel(row rowScanner) (*controlplane.NotifyChannel, error) {
	var c controlplane.NotifyChannel
	var cfg, levels string
	var created, updated int64
	if err := row.Scan(&c.ID, &c.Name, &c.Type, &cfg, &levels, &c.Tenant, &c.Enabled, &c.SendResolved, &created, &updated); err != nil {
		return nil, mapErr(err)
	}
	c.CreatedAt, c.UpdatedAt = fromTS(created), fromTS(updated)
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
	return db.write(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `INSERT INTO alert_channels (name, type, config, levels, tenant, enabled, send_resolved,
			created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`, c.Name, c.Type, storeutil.JSONText(c.Config),
			levelsText(c.Levels), c.Tenant, c.Enabled, c.SendResolved, ts(now), ts(now)).Scan(&c.ID)
		if err != nil {
			return fmt.Errorf("channel %s: %w", c.Name, mapErr(err))
		}
		return nil
	})
}

// GetChannel returns one channel.
func (db *DB) GetChannel(ctx context.Context, id int64) (*controlplane.NotifyChannel, error) {
	c, err := scanChannel(db.r.QueryRowContext(ctx, `SELECT `+channelCols+` FROM alert_channels WHERE id = ?`, id))
	if err != nil {
		return nil, fmt.Errorf("channel %d: %w", id, err)
	}
	return c, nil
}

// ListChannels returns every channel by id.
func (db *DB) ListChannels(ctx context.Context) ([]*controlplane.NotifyChannel, error) {
	return queryAll(ctx, db, scanChannel, `SELECT `+channelCols+` FROM alert_channels ORDER BY id`)
}

// UpdateChannel rewrites c.
func (db *DB) UpdateChannel(ctx context.Context, c *controlplane.NotifyChannel) error {
	if err := c.Validate(); err != nil {
		return err
	}
	now := db.now()
	return db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE alert_channels SET name = ?, type = ?, config = ?, levels = ?, tenant = ?,
			enabled = ?, send_resolved = ?, updated_at = ? WHERE id = ?`, c.Name, c.Type, storeutil.JSONText(c.Config),
			levelsText(c.Levels), c.Tenant, c.Enabled, c.SendResolved, ts(now), c.ID)
		if err != nil {
			return fmt.Errorf("channel %d: %w", c.ID, mapErr(err))
		}
		c.UpdatedAt = now
		return affected(res, fmt.Sprintf("channel %d", c.ID))
	})
}

// DeleteChannel removes a channel and its outbox rows.
func (db *DB) DeleteChannel(ctx context.Context, id int64) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM alert_channels WHERE id = ?`, id)
		if err != nil {
			return mapErr(err)
		}
		return affected(res, fmt.Sprintf("channel %d", id))
	})
}

const notificationCols = `id, channel_id, alert_id, kind, status, attempts, next_attempt, last_error, created_at, delivered_at`

func scanNotification(row rowScanner) (*controlplane.Notification, error) {
	var n controlplane.Notification
	var next, created int64
	var delivered sql.NullInt64
	if err := row.Scan(&n.ID, &n.ChannelID, &n.AlertID, &n.Kind, &n.Status, &n.Attempts, &next, &n.LastError, &created, &delivered); err != nil {
		return nil, mapErr(err)
	}
	n.NextAttempt, n.CreatedAt, n.DeliveredAt = fromTS(next), fromTS(created), fromNullTS(delivered)
	return &n, nil
}

// EnqueueNotification implements controlplane.AlertStore.
func (db *DB) EnqueueNotification(ctx context.Context, n *controlplane.Notification) error {
	now := db.now()
	n.Status, n.CreatedAt, n.NextAttempt = controlplane.DeliveryPending, now, now
	return db.write(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `INSERT INTO alert_notifications (channel_id, alert_id, kind, status, next_attempt, created_at)
			VALUES (?, ?, ?, ?, ?, ?) RETURNING id`, n.ChannelID, n.AlertID, n.Kind, n.Status, ts(now), ts(now)).Scan(&n.ID)
		return mapErr(err)
	})
}

// DueNotifications implements controlplane.AlertStore.
func (db *DB) DueNotifications(ctx context.Context, now time.Time, limit int) ([]*controlplane.Notification, error) {
	return queryAll(ctx, db, scanNotification, `SELECT `+notificationCols+` FROM alert_notifications
		WHERE status = ? AND next_attempt <= ? ORDER BY next_attempt, id LIMIT ?`, controlplane.DeliveryPending, ts(now), limit)
}

// MarkNotification implements controlplane.AlertStore.
func (db *DB) MarkNotification(ctx context.Context, id int64, delivered bool, errText string, next time.Time, final bool, at time.Time) error {
	status := controlplane.DeliveryPending
	var deliveredAt any
	switch {
	case delivered:
		status, deliveredAt = controlplane.DeliveryDelivered, ts(storeutil.Trunc(at))
	case final:
		status = controlplane.DeliveryFailed
	}
	return db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE alert_notifications SET status = ?, attempts = attempts + 1, next_attempt = ?,
			last_error = ?, delivered_at = ? WHERE id = ?`, status, ts(storeutil.Trunc(next)), errText, deliveredAt, id)
		if err != nil {
			return mapErr(err)
		}
		return affected(res, fmt.Sprintf("notification %d", id))
	})
}

// ListNotifications implements controlplane.AlertStore.
func (db *DB) ListNotifications(ctx context.Context, f controlplane.NotificationFilter) ([]*controlplane.Notification, int, error) {
	p := f.Page.Normalize()
	a := db.alertArgs()
	where := storeutil.NotificationWhere(f, a)
	var out []*controlplane.Notification
	var total int
	err := db.read(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM alert_notifications`+where, a.Vals...).Scan(&total); err != nil {
			return mapErr(err)
		}
		rows, err := tx.QueryContext(ctx, `SELECT `+notificationCols+` FROM alert_notifications`+where+` ORDER BY id DESC LIMIT ? OFFSET ?`,
			append(a.Vals, p.Limit, p.Offset)...)
		if err != nil {
			return mapErr(err)
		}
		defer rows.Close()
		for rows.Next() {
			n, err := scanNotification(rows)
			if err != nil {
				return err
			}
			out = append(out, n)
		}
		return mapErr(rows.Err())
	})
	return out, total, err
}
