package storesql

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

const ruleCols = `id, tenant, name, expr, for_ms, keep_firing_ms, level, labels, annotations, enabled, created_by, created_at, updated_at`

func (q Queries) scanRule(row Row) (*controlplane.AlertRule, error) {
	var r controlplane.AlertRule
	var forMS, keepMS int64
	var labels, ann string
	if err := row.Scan(&r.ID, &r.Tenant, &r.Name, &r.Expr, &forMS, &keepMS, &r.Level, &labels, &ann, &r.Enabled,
		&r.CreatedBy, q.db.ScanTime(&r.CreatedAt), q.db.ScanTime(&r.UpdatedAt)); err != nil {
		return nil, err
	}
	r.For, r.KeepFiringFor = time.Duration(forMS)*time.Millisecond, time.Duration(keepMS)*time.Millisecond
	if err := storeutil.FromJSONText(labels, &r.Labels); err != nil {
		return nil, err
	}
	return &r, storeutil.FromJSONText(ann, &r.Annotations)
}

// CreateAlertRule inserts r; ErrConflict when (tenant, name) exists.
func (q Queries) CreateAlertRule(ctx context.Context, r *controlplane.AlertRule) error {
	if err := r.Validate(); err != nil {
		return err
	}
	now := q.db.Now()
	r.CreatedAt, r.UpdatedAt = now, now
	return q.db.Write(ctx, func(c Conn) error {
		err := c.QueryRow(ctx, `INSERT INTO alert_rules (tenant, name, expr, for_ms, keep_firing_ms, level,
			labels, annotations, enabled, created_by, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11) RETURNING id`,
			r.Tenant, r.Name, r.Expr, r.For.Milliseconds(), r.KeepFiringFor.Milliseconds(), string(r.Level),
			storeutil.JSONText(r.Labels), storeutil.JSONText(r.Annotations), r.Enabled, r.CreatedBy, q.db.Time(now)).Scan(&r.ID)
		if err != nil {
			return fmt.Errorf("alert rule %s/%s: %w", r.Tenant, r.Name, err)
		}
		return nil
	})
}

// GetAlertRule returns one custom rule.
func (q Queries) GetAlertRule(ctx context.Context, id int64) (*controlplane.AlertRule, error) {
	r, err := q.scanRule(q.db.Reader().QueryRow(ctx, `SELECT `+ruleCols+` FROM alert_rules WHERE id = $1`, id))
	if err != nil {
		return nil, fmt.Errorf("alert rule %d: %w", id, err)
	}
	return r, nil
}

// ListAlertRules returns every custom rule by id.
func (q Queries) ListAlertRules(ctx context.Context) ([]*controlplane.AlertRule, error) {
	return all(ctx, q.db.Reader(), q.scanRule, `SELECT `+ruleCols+` FROM alert_rules ORDER BY id`)
}

// UpdateAlertRule rewrites r (all fields but the creator and creation time).
func (q Queries) UpdateAlertRule(ctx context.Context, r *controlplane.AlertRule) error {
	if err := r.Validate(); err != nil {
		return err
	}
	now := q.db.Now()
	return q.db.Write(ctx, func(c Conn) error {
		n, err := c.Exec(ctx, `UPDATE alert_rules SET tenant = $1, name = $2, expr = $3, for_ms = $4, keep_firing_ms = $5,
			level = $6, labels = $7, annotations = $8, enabled = $9, updated_at = $10 WHERE id = $11`,
			r.Tenant, r.Name, r.Expr, r.For.Milliseconds(), r.KeepFiringFor.Milliseconds(), string(r.Level),
			storeutil.JSONText(r.Labels), storeutil.JSONText(r.Annotations), r.Enabled, q.db.Time(now), r.ID)
		if err == nil && n > 0 {
			r.UpdatedAt = now
		}
		return affected(n, err, fmt.Sprintf("alert rule %d", r.ID))
	})
}

// DeleteAlertRule removes a custom rule (its past instances stay).
func (q Queries) DeleteAlertRule(ctx context.Context, id int64) error {
	return q.db.Write(ctx, func(c Conn) error {
		n, err := c.Exec(ctx, `DELETE FROM alert_rules WHERE id = $1`, id)
		return affected(n, err, fmt.Sprintf("alert rule %d", id))
	})
}

const alertCols = `id, fingerprint, rule, rule_id, tenant, node, level, state, labels, annotations, value, silenced,
	active_at, fired_at, acked_at, acked_by, ack_comment, resolved_at, resolved_by, resolution, updated_at`

func (q Queries) scanAlert(row Row) (*controlplane.AlertInstance, error) {
	var a controlplane.AlertInstance
	var labels, ann string
	d := q.db
	if err := row.Scan(&a.ID, &a.Fingerprint, &a.Rule, &a.RuleID, &a.Tenant, &a.Node, &a.Level, &a.State, &labels, &ann,
		&a.Value, &a.Silenced, d.ScanTime(&a.ActiveAt), d.ScanTime(&a.FiredAt), d.ScanNullTime(&a.AckedAt), &a.AckedBy,
		&a.AckComment, d.ScanNullTime(&a.ResolvedAt), &a.ResolvedBy, &a.Resolution, d.ScanTime(&a.UpdatedAt)); err != nil {
		return nil, err
	}
	if err := storeutil.FromJSONText(labels, &a.Labels); err != nil {
		return nil, err
	}
	return &a, storeutil.FromJSONText(ann, &a.Annotations)
}

func (q Queries) getAlert(ctx context.Context, c Conn, id int64) (*controlplane.AlertInstance, error) {
	a, err := q.scanAlert(c.QueryRow(ctx, `SELECT `+alertCols+` FROM alerts WHERE id = $1`, id))
	if err != nil {
		return nil, fmt.Errorf("alert %d: %w", id, err)
	}
	return a, nil
}

func (q Queries) alertEvent(ctx context.Context, c Conn, id int64, state controlplane.AlertState, actor, comment string, at time.Time) error {
	_, err := c.Exec(ctx, `INSERT INTO alert_events (alert_id, state, actor, comment, at) VALUES ($1, $2, $3, $4, $5)`,
		id, string(state), actor, comment, q.db.Time(at))
	return err
}

func (q Queries) enqueue(ctx context.Context, c Conn, alertID int64, kind string, channels []int64, at time.Time) error {
	for _, ch := range channels {
		if _, err := c.Exec(ctx, `INSERT INTO alert_notifications (channel_id, alert_id, kind, status, next_attempt, created_at)
			VALUES ($1, $2, $3, $4, $5, $5)`, ch, alertID, kind, controlplane.DeliveryPending, q.db.Time(at)); err != nil {
			return fmt.Errorf("queue notification for channel %d: %w", ch, err)
		}
	}
	return nil
}

// OpenAlert implements controlplane.AlertStore. The unique open_fingerprint
// makes two servers racing to open the same alert leave one instance.
func (q Queries) OpenAlert(ctx context.Context, a *controlplane.AlertInstance, notify []int64) (*controlplane.AlertInstance, bool, error) {
	if !a.Level.Valid() || a.Fingerprint == "" || a.Rule == "" {
		return nil, false, controlplane.Invalidf("alert needs a fingerprint, a rule and a level")
	}
	now := q.db.Now()
	var out *controlplane.AlertInstance
	created := false
	err := q.db.Tx(ctx, func(c Conn) error {
		var id int64
		fired := storeutil.Trunc(a.FiredAt)
		err := c.QueryRow(ctx, `INSERT INTO alerts (fingerprint, open_fingerprint, rule, rule_id, tenant, node, level, state,
			labels, annotations, value, silenced, active_at, fired_at, updated_at)
			VALUES ($1, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
			ON CONFLICT (open_fingerprint) DO NOTHING RETURNING id`,
			a.Fingerprint, a.Rule, a.RuleID, a.Tenant, a.Node, string(a.Level), string(controlplane.AlertActive),
			storeutil.JSONText(a.Labels), storeutil.JSONText(a.Annotations), a.Value, a.Silenced,
			q.db.Time(storeutil.Trunc(a.ActiveAt)), q.db.Time(fired), q.db.Time(now)).Scan(&id)
		if errors.Is(err, controlplane.ErrNotFound) {
			out, err = q.scanAlert(c.QueryRow(ctx, `SELECT `+alertCols+` FROM alerts WHERE open_fingerprint = $1`, a.Fingerprint))
			return err
		}
		if err != nil {
			return fmt.Errorf("open alert %s: %w", a.Rule, err)
		}
		if err := q.alertEvent(ctx, c, id, controlplane.AlertActive, "system", "", fired); err != nil {
			return err
		}
		if err := q.enqueue(ctx, c, id, controlplane.NotifyFiring, notify, now); err != nil {
			return err
		}
		created = true
		out, err = q.getAlert(ctx, c, id)
		return err
	})
	return out, created, err
}

// AckAlert implements controlplane.AlertStore.
func (q Queries) AckAlert(ctx context.Context, id int64, by, comment string, at time.Time) (*controlplane.AlertInstance, error) {
	at = storeutil.Trunc(at)
	var out *controlplane.AlertInstance
	err := q.db.Tx(ctx, func(c Conn) error {
		n, err := c.Exec(ctx, `UPDATE alerts SET state = $1, acked_at = $2, acked_by = $3, ack_comment = $4, updated_at = $5
			WHERE id = $6 AND state = $7`, string(controlplane.AlertAcknowledged), q.db.Time(at), by, comment,
			q.db.Time(q.db.Now()), id, string(controlplane.AlertActive))
		if err != nil {
			return err
		}
		if n == 0 {
			if _, err := q.getAlert(ctx, c, id); err != nil {
				return err
			}
			return fmt.Errorf("alert %d is not ACTIVE: %w", id, controlplane.ErrConflict)
		}
		if err := q.alertEvent(ctx, c, id, controlplane.AlertAcknowledged, by, comment, at); err != nil {
			return err
		}
		out, err = q.getAlert(ctx, c, id)
		return err
	})
	return out, err
}

// ResolveAlert implements controlplane.AlertStore.
func (q Queries) ResolveAlert(ctx context.Context, id int64, by, reason string, at time.Time, notify []int64) (*controlplane.AlertInstance, error) {
	at = storeutil.Trunc(at)
	var out *controlplane.AlertInstance
	err := q.db.Tx(ctx, func(c Conn) error {
		n, err := c.Exec(ctx, `UPDATE alerts SET state = $1, open_fingerprint = NULL, resolved_at = $2, resolved_by = $3,
			resolution = $4, updated_at = $5 WHERE id = $6 AND state <> $1`,
			string(controlplane.AlertResolved), q.db.Time(at), by, reason, q.db.Time(q.db.Now()), id)
		if err != nil {
			return err
		}
		if n == 0 {
			if _, err := q.getAlert(ctx, c, id); err != nil {
				return err
			}
			return fmt.Errorf("alert %d is already RESOLVED: %w", id, controlplane.ErrConflict)
		}
		actor := by
		if actor == "" {
			actor = "system"
		}
		if err := q.alertEvent(ctx, c, id, controlplane.AlertResolved, actor, reason, at); err != nil {
			return err
		}
		if err := q.enqueue(ctx, c, id, controlplane.NotifyResolved, notify, q.db.Now()); err != nil {
			return err
		}
		out, err = q.getAlert(ctx, c, id)
		return err
	})
	return out, err
}

// GetAlert returns one instance.
func (q Queries) GetAlert(ctx context.Context, id int64) (*controlplane.AlertInstance, error) {
	return q.getAlert(ctx, q.db.Reader(), id)
}

// ListAlerts returns a page of instances, newest first, and the total.
func (q Queries) ListAlerts(ctx context.Context, f controlplane.AlertFilter) ([]*controlplane.AlertInstance, int, error) {
	if err := storeutil.CheckAlertFilter(f); err != nil {
		return nil, 0, err
	}
	p := f.Page.Normalize()
	a := q.args()
	where := storeutil.AlertWhere(f, a)
	var out []*controlplane.AlertInstance
	var total int
	err := q.db.ReadTx(ctx, func(c Conn) error {
		if err := c.QueryRow(ctx, `SELECT COUNT(*) FROM alerts`+where, a.Vals...).Scan(&total); err != nil {
			return err
		}
		lim, off := a.Add(p.Limit), a.Add(p.Offset)
		var err error
		out, err = all(ctx, c, q.scanAlert, `SELECT `+alertCols+` FROM alerts`+where+
			` ORDER BY fired_at DESC, id DESC LIMIT `+lim+` OFFSET `+off, a.Vals...)
		return err
	})
	return out, total, err
}

// ListAlertEvents returns an instance's history, oldest first.
func (q Queries) ListAlertEvents(ctx context.Context, alertID int64) ([]*controlplane.AlertEvent, error) {
	return all(ctx, q.db.Reader(), func(row Row) (*controlplane.AlertEvent, error) {
		var e controlplane.AlertEvent
		if err := row.Scan(&e.ID, &e.AlertID, &e.State, &e.Actor, &e.Comment, q.db.ScanTime(&e.At)); err != nil {
			return nil, err
		}
		return &e, nil
	}, `SELECT id, alert_id, state, actor, comment, at FROM alert_events WHERE alert_id = $1 ORDER BY id`, alertID)
}

// AlertStats implements controlplane.AlertStore.
func (q Queries) AlertStats(ctx context.Context, in controlplane.AlertFilter) (*controlplane.AlertStats, error) {
	f := controlplane.AlertFilter{Tenant: in.Tenant, Scope: in.Scope, Since: in.Since, Until: in.Until}
	a := q.args()
	list, err := all(ctx, q.db.Reader(), q.scanAlert, `SELECT `+alertCols+` FROM alerts`+storeutil.AlertWhere(f, a), a.Vals...)
	if err != nil {
		return nil, err
	}
	return controlplane.ComputeAlertStats(list), nil
}
