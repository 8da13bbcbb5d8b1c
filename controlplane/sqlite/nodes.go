package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

const nodeCols = `id, hostname, os, arch, version, labels, state, cordoned, draining, health, cpu_count,
	memory_total_mib, memory_free_mib, inventory, running, api_key_prefix, last_heartbeat, last_status_seq,
	created_at, updated_at`

func scanNode(row interface{ Scan(...any) error }) (*controlplane.Node, error) {
	var n controlplane.Node
	var labels, inv, running []byte
	var hb sql.NullInt64
	var created, updated int64
	var seq int64
	if err := row.Scan(&n.ID, &n.Hostname, &n.OS, &n.Arch, &n.Version, &labels, &n.State, &n.Cordoned,
		&n.Draining, &n.Health, &n.CPUCount, &n.MemoryTotalMiB, &n.MemoryFreeMiB, &inv, &running,
		&n.APIKeyPrefix, &hb, &seq, &created, &updated); err != nil {
		return nil, mapErr(err)
	}
	if err := storeutil.DecodeNode(&n, labels, inv, running); err != nil {
		return nil, err
	}
	n.LastHeartbeat = fromNullTS(hb)
	n.LastStatusSeq = uint64(seq)
	n.CreatedAt, n.UpdatedAt = fromTS(created), fromTS(updated)
	return &n, nil
}

// EnrollNode consumes the bootstrap token and inserts n in one transaction.
func (db *DB) EnrollNode(ctx context.Context, tokenHash string, n *controlplane.Node) error {
	now := db.now()
	labels, inv, err := storeutil.NodeJSON(n)
	if err != nil {
		return err
	}
	return db.write(ctx, func(tx *sql.Tx) error {
		var id int64
		var used sql.NullInt64
		var expires int64
		err := tx.QueryRowContext(ctx, `SELECT id, used_at, expires_at FROM bootstrap_tokens WHERE token_hash = ?`,
			tokenHash).Scan(&id, &used, &expires)
		if err != nil {
			return fmt.Errorf("bootstrap token: %w", mapErr(err))
		}
		if err := storeutil.CheckBootstrapUse(used.Valid, fromTS(expires), now); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE bootstrap_tokens SET used_at = ?, node_id = ? WHERE id = ?`,
			ts(now), n.ID, id); err != nil {
			return fmt.Errorf("consume bootstrap token: %w", mapErr(err))
		}
		storeutil.PrepareEnroll(n, now)
		if _, err := tx.ExecContext(ctx, `INSERT INTO nodes (id, hostname, os, arch, version, labels, state,
			health, cpu_count, memory_total_mib, memory_free_mib, inventory, api_key_prefix, last_heartbeat,
			created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			n.ID, n.Hostname, n.OS, n.Arch, n.Version, labels, n.State, n.Health, n.CPUCount, n.MemoryTotalMiB,
			n.MemoryFreeMiB, inv, n.APIKeyPrefix, ts(now), ts(now), ts(now)); err != nil {
			return fmt.Errorf("insert node: %w", mapErr(err))
		}
		return nil
	})
}

// GetNode returns one node.
func (db *DB) GetNode(ctx context.Context, id string) (*controlplane.Node, error) {
	var n *controlplane.Node
	err := db.read(ctx, func(tx *sql.Tx) error {
		var err error
		n, err = scanNode(tx.QueryRowContext(ctx, `SELECT `+nodeCols+` FROM nodes WHERE id = ?`, id))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", id, err)
	}
	return n, nil
}

// ListNodes returns a page of nodes ordered by id.
func (db *DB) ListNodes(ctx context.Context, f controlplane.NodeFilter) ([]*controlplane.Node, int, error) {
	var where []string
	var args []any
	if f.State != "" {
		where, args = append(where, "state = ?"), append(args, f.State)
	}
	if f.Vendor != "" {
		where = append(where, `EXISTS (SELECT 1 FROM json_each(nodes.inventory) WHERE json_extract(value, '$.vendor') = ?
			AND json_array_length(json_extract(value, '$.devices')) > 0)`)
		args = append(args, f.Vendor)
	}
	if f.Query != "" {
		where = append(where, "(instr(id, ?) > 0 OR instr(hostname, ?) > 0)")
		args = append(args, f.Query, f.Query)
	}
	var out []*controlplane.Node
	var total int
	err := db.read(ctx, func(tx *sql.Tx) error {
		var err error
		total, err = page(ctx, tx, "nodes", where, args, "id", f.Page, nodeCols, func(r *sql.Rows) error {
			n, err := scanNode(r)
			if err == nil {
				out = append(out, n)
			}
			return err
		})
		return err
	})
	return out, total, err
}

// RecordHeartbeat stores a heartbeat and marks the node online.
func (db *DB) RecordHeartbeat(ctx context.Context, id string, hb controlplane.NodeHeartbeat) (*controlplane.Node, error) {
	var inv any // NULL keeps the stored inventory
	s, keep, err := storeutil.HeartbeatInventory(hb.Inventory)
	if err != nil {
		return nil, err
	}
	if !keep {
		inv = s
	}
	running := storeutil.RunningJSON(hb.Running)
	at := hb.At
	if at.IsZero() {
		at = db.now()
	}
	var n *controlplane.Node
	err = db.write(ctx, func(tx *sql.Tx) error {
		var err error
		n, err = scanNode(tx.QueryRowContext(ctx, `UPDATE nodes SET state = 'online', health = ?, cpu_count = ?,
			memory_total_mib = ?, memory_free_mib = ?, inventory = COALESCE(?, inventory), running = ?,
			last_heartbeat = ?, updated_at = ? WHERE id = ? RETURNING `+nodeCols,
			hb.Health, hb.CPUCount, hb.MemoryTotalMiB, hb.MemoryFreeMiB, inv, running, ts(at), ts(db.now()), id))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("heartbeat of node %s: %w", id, err)
	}
	return n, nil
}

// MarkNodesOffline flips online nodes silent since before cutoff.
func (db *DB) MarkNodesOffline(ctx context.Context, cutoff time.Time) ([]string, error) {
	var ids []string
	err := db.write(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `UPDATE nodes SET state = 'offline', updated_at = ?
			WHERE state = 'online' AND (last_heartbeat IS NULL OR last_heartbeat < ?) RETURNING id`,
			ts(db.now()), ts(cutoff))
		if err != nil {
			return mapErr(err)
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return mapErr(err)
			}
			ids = append(ids, id)
		}
		return mapErr(rows.Err())
	})
	return ids, err
}

// SetNodeScheduling sets the cordon and drain flags.
func (db *DB) SetNodeScheduling(ctx context.Context, id string, cordoned, draining bool) (*controlplane.Node, error) {
	var n *controlplane.Node
	err := db.write(ctx, func(tx *sql.Tx) error {
		var err error
		n, err = scanNode(tx.QueryRowContext(ctx, `UPDATE nodes SET cordoned = ?, draining = ?, updated_at = ?
			WHERE id = ? RETURNING `+nodeCols, cordoned, draining, ts(db.now()), id))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", id, err)
	}
	return n, nil
}
