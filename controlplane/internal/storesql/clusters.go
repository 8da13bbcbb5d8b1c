package storesql

import (
	"context"
	"fmt"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
)

// The hub's member clusters and the tasks it forwarded to them.

const clusterCols = `id, name, url, api_key_sealed, ca_pem, fingerprint, version, status, last_error, summary,
	polled_at, created_by, created_at, updated_at`

func (q Queries) scanCluster(row Row) (*controlplane.MemberCluster, error) {
	var c controlplane.MemberCluster
	var summary string
	if err := row.Scan(&c.ID, &c.Name, &c.URL, &c.APIKeySealed, &c.CAPEM, &c.Fingerprint, &c.Version, &c.Status,
		&c.LastError, &summary, q.db.ScanNullTime(&c.PolledAt), &c.CreatedBy, q.db.ScanTime(&c.CreatedAt),
		q.db.ScanTime(&c.UpdatedAt)); err != nil {
		return nil, err
	}
	if summary != "" {
		c.Summary = []byte(summary)
	}
	return &c, nil
}

// CreateCluster: see controlplane.ClusterStore.
func (q Queries) CreateCluster(ctx context.Context, c *controlplane.MemberCluster) error {
	if err := c.Validate(); err != nil {
		return err
	}
	now := q.db.Now()
	c.CreatedAt, c.UpdatedAt = now, now
	if c.Status == "" {
		c.Status = controlplane.ClusterUnknown
	}
	return q.db.Write(ctx, func(cn Conn) error {
		err := cn.QueryRow(ctx, `INSERT INTO clusters (name, url, api_key_sealed, ca_pem, fingerprint, version, status,
			last_error, summary, polled_at, created_by, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12) RETURNING id`,
			c.Name, c.URL, c.APIKeySealed, c.CAPEM, c.Fingerprint, c.Version, string(c.Status), c.LastError,
			string(c.Summary), q.db.NullTime(c.PolledAt), c.CreatedBy, q.db.Time(now)).Scan(&c.ID)
		if err != nil {
			return fmt.Errorf("cluster %q: %w", c.Name, err)
		}
		return nil
	})
}

// GetCluster: see controlplane.ClusterStore.
func (q Queries) GetCluster(ctx context.Context, id int64) (*controlplane.MemberCluster, error) {
	c, err := q.scanCluster(q.db.Reader().QueryRow(ctx, `SELECT `+clusterCols+` FROM clusters WHERE id = $1`, id))
	if err != nil {
		return nil, fmt.Errorf("cluster %d: %w", id, err)
	}
	return c, nil
}

// ListClusters: see controlplane.ClusterStore; by name.
func (q Queries) ListClusters(ctx context.Context) ([]*controlplane.MemberCluster, error) {
	return all(ctx, q.db.Reader(), q.scanCluster, `SELECT `+clusterCols+` FROM clusters ORDER BY `+q.db.Bytewise("name"))
}

// DeleteCluster: see controlplane.ClusterStore.
func (q Queries) DeleteCluster(ctx context.Context, id int64) error {
	return q.db.Write(ctx, func(c Conn) error {
		n, err := c.Exec(ctx, `DELETE FROM clusters WHERE id = $1`, id)
		return affected(n, err, fmt.Sprintf("cluster %d", id))
	})
}

// RecordClusterPoll: see controlplane.ClusterStore.
func (q Queries) RecordClusterPoll(ctx context.Context, id int64, status controlplane.ClusterStatus, version, lastError string,
	summary []byte, at time.Time,
) error {
	return q.db.Write(ctx, func(c Conn) error {
		n, err := c.Exec(ctx, `UPDATE clusters SET status = $2, version = CASE WHEN CAST($3 AS TEXT) = '' THEN version ELSE CAST($3 AS TEXT) END,
			last_error = $4, summary = CASE WHEN CAST($5 AS TEXT) = '' THEN summary ELSE CAST($5 AS TEXT) END, polled_at = $6, updated_at = $6
			WHERE id = $1`, id, string(status), version, lastError, string(summary), q.db.Time(at))
		return affected(n, err, fmt.Sprintf("cluster %d", id))
	})
}

const forwardedCols = `id, cluster, member_task_id, name, owner_id, owner, tenant, state, reason, placement,
	created_at, updated_at, finished_at`

func (q Queries) scanForwarded(row Row) (*controlplane.ForwardedTask, error) {
	var t controlplane.ForwardedTask
	var placement string
	if err := row.Scan(&t.ID, &t.Cluster, &t.MemberTaskID, &t.Name, &t.OwnerID, &t.Owner, &t.Tenant, &t.State, &t.Reason,
		&placement, q.db.ScanTime(&t.CreatedAt), q.db.ScanTime(&t.UpdatedAt), q.db.ScanNullTime(&t.FinishedAt)); err != nil {
		return nil, err
	}
	if placement != "" {
		t.Placement = []byte(placement)
	}
	return &t, nil
}

// CreateForwardedTask: see controlplane.ClusterStore.
func (q Queries) CreateForwardedTask(ctx context.Context, t *controlplane.ForwardedTask) error {
	if t.Cluster == "" || t.State == "" {
		return controlplane.Invalidf("a forwarded task needs a cluster and a state")
	}
	now := q.db.Now()
	t.CreatedAt, t.UpdatedAt = now, now
	var key, hash *string
	if t.SubmitKey != nil {
		key, hash = &t.SubmitKey.Key, &t.SubmitKey.Hash
	}
	return q.db.Write(ctx, func(c Conn) error {
		return c.QueryRow(ctx, `INSERT INTO forwarded_tasks (cluster, member_task_id, name, owner_id, owner, tenant, state,
			reason, placement, created_at, updated_at, finished_at, submit_key, submit_hash)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10, $11, $12, $13)
			RETURNING id`, t.Cluster, t.MemberTaskID, t.Name, t.OwnerID, t.Owner, t.Tenant, string(t.State), t.Reason,
			string(t.Placement), q.db.Time(now), q.db.NullTime(t.FinishedAt), key, hash).Scan(&t.ID)
	})
}

// ForwardedTaskBySubmitKey: see controlplane.ClusterStore.
func (q Queries) ForwardedTaskBySubmitKey(ctx context.Context, ownerID int64, key string) (*controlplane.ForwardedTask, string, error) {
	var hash string
	t, err := q.scanForwarded(scanFirst{q.db.Reader().QueryRow(ctx, `SELECT submit_hash, `+forwardedCols+` FROM forwarded_tasks
		WHERE owner_id = $1 AND submit_key = $2`, ownerID, key), &hash})
	if err != nil {
		return nil, "", fmt.Errorf("hub task submitted with key %q: %w", key, err)
	}
	return t, hash, nil
}

// GetForwardedTask: see controlplane.ClusterStore.
func (q Queries) GetForwardedTask(ctx context.Context, id int64) (*controlplane.ForwardedTask, error) {
	t, err := q.scanForwarded(q.db.Reader().QueryRow(ctx, `SELECT `+forwardedCols+` FROM forwarded_tasks WHERE id = $1`, id))
	if err != nil {
		return nil, fmt.Errorf("forwarded task %d: %w", id, err)
	}
	return t, nil
}

// terminalForwarded is the SQL list of the ended states.
const terminalForwarded = `('succeeded', 'failed', 'cancelled', 'timed_out')`

// ListForwardedTasks: see controlplane.ClusterStore; newest first.
func (q Queries) ListForwardedTasks(ctx context.Context, f controlplane.ForwardedFilter) ([]*controlplane.ForwardedTask, int, error) {
	var where []string
	a := q.args()
	if f.Cluster != "" {
		where = append(where, "cluster = "+a.Add(f.Cluster))
	}
	if f.OwnerID != 0 {
		where = append(where, "owner_id = "+a.Add(f.OwnerID))
	}
	if f.Tenant != "" {
		where = append(where, "tenant = "+a.Add(f.Tenant))
	}
	if f.Active {
		where = append(where, "state NOT IN "+terminalForwarded)
	}
	var out []*controlplane.ForwardedTask
	var total int
	err := q.db.ReadTx(ctx, func(c Conn) error {
		var err error
		total, err = page(ctx, c, "forwarded_tasks", where, a, "id DESC", f.Page, forwardedCols, q.scanForwarded, &out)
		return err
	})
	return out, total, err
}

// UpdateForwardedTask: see controlplane.ClusterStore.
func (q Queries) UpdateForwardedTask(ctx context.Context, id, memberTaskID int64, state controlplane.ForwardedState, reason string,
	finishedAt *time.Time,
) error {
	return q.db.Write(ctx, func(c Conn) error {
		n, err := c.Exec(ctx, `UPDATE forwarded_tasks SET member_task_id = CASE WHEN CAST($2 AS BIGINT) = 0 THEN member_task_id ELSE CAST($2 AS BIGINT) END,
			state = $3, reason = $4, finished_at = $5, updated_at = $6 WHERE id = $1`,
			id, memberTaskID, string(state), reason, q.db.NullTime(finishedAt), q.db.Time(q.db.Now()))
		return affected(n, err, fmt.Sprintf("forwarded task %d", id))
	})
}

// MarkClusterTasksUnknown: see controlplane.ClusterStore.
func (q Queries) MarkClusterTasksUnknown(ctx context.Context, cluster, reason string) (int, error) {
	var n int64
	err := q.db.Write(ctx, func(c Conn) error {
		var err error
		n, err = c.Exec(ctx, `UPDATE forwarded_tasks SET state = 'unknown', reason = $2, updated_at = $3
			WHERE cluster = $1 AND state NOT IN `+terminalForwarded+` AND state <> 'unknown'`,
			cluster, reason, q.db.Time(q.db.Now()))
		return err
	})
	return int(n), err
}

// DeleteForwardedTask: see controlplane.ClusterStore.
func (q Queries) DeleteForwardedTask(ctx context.Context, id int64) error {
	return q.db.Write(ctx, func(c Conn) error {
		n, err := c.Exec(ctx, `DELETE FROM forwarded_tasks WHERE id = $1`, id)
		return affected(n, err, fmt.Sprintf("forwarded task %d", id))
	})
}
