package storesql

import (
	"context"
	"fmt"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

const nodeCols = `id, hostname, os, arch, version, labels, state, cordoned, draining, health, cpu_count,
	memory_total_mib, memory_free_mib, inventory, running, api_key_prefix, last_heartbeat, last_status_seq,
	created_at, updated_at`

func (q Queries) scanNode(row Row) (*controlplane.Node, error) {
	var n controlplane.Node
	var labels, inv, running []byte
	var seq int64
	d := q.db
	if err := row.Scan(&n.ID, &n.Hostname, &n.OS, &n.Arch, &n.Version, &labels, &n.State, &n.Cordoned,
		&n.Draining, &n.Health, &n.CPUCount, &n.MemoryTotalMiB, &n.MemoryFreeMiB, &inv, &running,
		&n.APIKeyPrefix, d.ScanNullTime(&n.LastHeartbeat), &seq, d.ScanTime(&n.CreatedAt), d.ScanTime(&n.UpdatedAt)); err != nil {
		return nil, err
	}
	if err := storeutil.DecodeNode(&n, labels, []byte("null"), running); err != nil {
		return nil, err
	}
	var err error
	if n.Inventory, err = q.inv.decode(n.ID, inv); err != nil {
		return nil, err
	}
	n.LastStatusSeq = uint64(seq)
	return &n, nil
}

// EnrollNode consumes the bootstrap token and inserts n in one transaction.
// The token row is locked (PostgreSQL: FOR UPDATE; SQLite: the write lock),
// so two servers enrolling with the same token at once serialise and the
// second sees it used.
func (q Queries) EnrollNode(ctx context.Context, tokenHash string, n *controlplane.Node) error {
	now := q.db.Now()
	labels, inv, err := storeutil.NodeJSON(n)
	if err != nil {
		return err
	}
	return q.db.Tx(ctx, func(c Conn) error {
		var id int64
		var used *time.Time
		var expires time.Time
		err := c.QueryRow(ctx, `SELECT id, used_at, expires_at FROM bootstrap_tokens WHERE token_hash = $1`+q.db.ForUpdate(),
			tokenHash).Scan(&id, q.db.ScanNullTime(&used), q.db.ScanTime(&expires))
		if err != nil {
			return fmt.Errorf("bootstrap token: %w", err)
		}
		if err := storeutil.CheckBootstrapUse(used != nil, expires, now); err != nil {
			return err
		}
		if _, err := c.Exec(ctx, `UPDATE bootstrap_tokens SET used_at = $1, node_id = $2 WHERE id = $3`,
			q.db.Time(now), n.ID, id); err != nil {
			return fmt.Errorf("consume bootstrap token: %w", err)
		}
		storeutil.PrepareEnroll(n, now)
		if _, err := c.Exec(ctx, `INSERT INTO nodes (id, hostname, os, arch, version, labels, state,
			health, cpu_count, memory_total_mib, memory_free_mib, inventory, api_key_prefix, last_heartbeat,
			created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $14, $14)`,
			n.ID, n.Hostname, n.OS, n.Arch, n.Version, labels, n.State, n.Health, n.CPUCount, n.MemoryTotalMiB,
			n.MemoryFreeMiB, inv, n.APIKeyPrefix, q.db.Time(now)); err != nil {
			return fmt.Errorf("insert node: %w", err)
		}
		return nil
	})
}

// GetNode returns one node.
func (q Queries) GetNode(ctx context.Context, id string) (*controlplane.Node, error) {
	n, err := q.scanNode(q.db.Reader().QueryRow(ctx, `SELECT `+nodeCols+` FROM nodes WHERE id = $1`, id))
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", id, err)
	}
	return n, nil
}

// ListNodes returns a page of nodes ordered by id.
func (q Queries) ListNodes(ctx context.Context, f controlplane.NodeFilter) ([]*controlplane.Node, int, error) {
	var where []string
	a := q.args()
	if f.State != "" {
		where = append(where, "state = "+a.Add(string(f.State)))
	}
	if f.Vendor != "" {
		where = append(where, q.db.InventoryHasVendor(a.Add(f.Vendor)))
	}
	if f.Query != "" {
		p := a.Add(f.Query)
		where = append(where, "("+q.db.Contains("id", p)+" OR "+q.db.Contains("hostname", p)+")")
	}
	var out []*controlplane.Node
	var total int
	err := q.db.ReadTx(ctx, func(c Conn) error {
		var err error
		total, err = page(ctx, c, "nodes", where, a, "id", f.Page, nodeCols, q.scanNode, &out)
		return err
	})
	return out, total, err
}

// RecordHeartbeat stores a heartbeat and marks the node online.
func (q Queries) RecordHeartbeat(ctx context.Context, id string, hb controlplane.NodeHeartbeat) (*controlplane.Node, error) {
	var inv any // NULL keeps the stored inventory
	s, keep, err := storeutil.HeartbeatInventory(hb.Inventory)
	if err != nil {
		return nil, err
	}
	if !keep {
		inv = s
	}
	at := hb.At
	if at.IsZero() {
		at = q.db.Now()
	}
	var n *controlplane.Node
	err = q.db.Write(ctx, func(c Conn) error {
		var err error
		n, err = q.scanNode(c.QueryRow(ctx, `UPDATE nodes SET state = 'online', health = $1, cpu_count = $2,
			memory_total_mib = $3, memory_free_mib = $4, inventory = COALESCE($5, inventory), running = $6,
			last_heartbeat = $7, updated_at = $8 WHERE id = $9 RETURNING `+nodeCols,
			hb.Health, hb.CPUCount, hb.MemoryTotalMiB, hb.MemoryFreeMiB, inv, storeutil.RunningJSON(hb.Running),
			q.db.Time(storeutil.Trunc(at)), q.db.Time(q.db.Now()), id))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("heartbeat of node %s: %w", id, err)
	}
	return n, nil
}

// MarkNodesOffline flips online nodes silent since before cutoff.
func (q Queries) MarkNodesOffline(ctx context.Context, cutoff time.Time) ([]string, error) {
	var ids []string
	err := q.db.Write(ctx, func(c Conn) error {
		var err error
		ids, err = all(ctx, c, func(r Row) (string, error) {
			var id string
			return id, r.Scan(&id)
		}, `UPDATE nodes SET state = 'offline', updated_at = $1
			WHERE state = 'online' AND (last_heartbeat IS NULL OR last_heartbeat < $2) RETURNING id`,
			q.db.Time(q.db.Now()), q.db.Time(storeutil.Trunc(cutoff)))
		return err
	})
	return ids, err
}

// SetNodeScheduling sets the cordon and drain flags.
func (q Queries) SetNodeScheduling(ctx context.Context, id string, cordoned, draining bool) (*controlplane.Node, error) {
	var n *controlplane.Node
	err := q.db.Write(ctx, func(c Conn) error {
		var err error
		n, err = q.scanNode(c.QueryRow(ctx, `UPDATE nodes SET cordoned = $1, draining = $2, updated_at = $3
			WHERE id = $4 RETURNING `+nodeCols, cordoned, draining, q.db.Time(q.db.Now()), id))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", id, err)
	}
	return n, nil
}
