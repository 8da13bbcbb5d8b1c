package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

const nodeCols = `id, hostname, os, arch, version, labels, state, cordoned, draining, health, cpu_count,
	memory_total_mib, memory_free_mib, inventory, running, api_key_prefix, last_heartbeat, last_status_seq,
	created_at, updated_at`

func scanNode(row pgx.Row) (*controlplane.Node, error) {
	var n controlplane.Node
	var labels, inv, running []byte
	var seq int64
	if err := row.Scan(&n.ID, &n.Hostname, &n.OS, &n.Arch, &n.Version, &labels, &n.State, &n.Cordoned,
		&n.Draining, &n.Health, &n.CPUCount, &n.MemoryTotalMiB, &n.MemoryFreeMiB, &inv, &running,
		&n.APIKeyPrefix, &n.LastHeartbeat, &seq, &n.CreatedAt, &n.UpdatedAt); err != nil {
		return nil, mapErr(err)
	}
	if err := storeutil.DecodeNode(&n, labels, inv, running); err != nil {
		return nil, err
	}
	n.LastStatusSeq = uint64(seq)
	n.LastHeartbeat = utcPtr(n.LastHeartbeat)
	n.CreatedAt, n.UpdatedAt = utc(n.CreatedAt), utc(n.UpdatedAt)
	return &n, nil
}

// EnrollNode consumes the bootstrap token and inserts n in one transaction.
// The token row is locked (FOR UPDATE), so two servers enrolling with the
// same token at once serialise and the second sees it used.
func (db *DB) EnrollNode(ctx context.Context, tokenHash string, n *controlplane.Node) error {
	now := db.now()
	labels, inv, err := storeutil.NodeJSON(n)
	if err != nil {
		return err
	}
	return db.tx(ctx, func(tx pgx.Tx) error {
		var id int64
		var used *time.Time
		var expires time.Time
		err := tx.QueryRow(ctx, `SELECT id, used_at, expires_at FROM bootstrap_tokens WHERE token_hash = $1 FOR UPDATE`,
			tokenHash).Scan(&id, &used, &expires)
		if err != nil {
			return fmt.Errorf("bootstrap token: %w", mapErr(err))
		}
		if err := storeutil.CheckBootstrapUse(used != nil, expires, now); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE bootstrap_tokens SET used_at = $1, node_id = $2 WHERE id = $3`,
			now, n.ID, id); err != nil {
			return fmt.Errorf("consume bootstrap token: %w", mapErr(err))
		}
		storeutil.PrepareEnroll(n, now)
		if _, err := tx.Exec(ctx, `INSERT INTO nodes (id, hostname, os, arch, version, labels, state,
			health, cpu_count, memory_total_mib, memory_free_mib, inventory, api_key_prefix, last_heartbeat,
			created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9, $10, $11, $12::jsonb, $13, $14, $14, $14)`,
			n.ID, n.Hostname, n.OS, n.Arch, n.Version, labels, n.State, n.Health, n.CPUCount, n.MemoryTotalMiB,
			n.MemoryFreeMiB, inv, n.APIKeyPrefix, now); err != nil {
			return fmt.Errorf("insert node: %w", mapErr(err))
		}
		return nil
	})
}

// GetNode returns one node.
func (db *DB) GetNode(ctx context.Context, id string) (*controlplane.Node, error) {
	n, err := scanNode(db.pool.QueryRow(ctx, `SELECT `+nodeCols+` FROM nodes WHERE id = $1`, id))
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", id, err)
	}
	return n, nil
}

// ListNodes returns a page of nodes ordered by id.
func (db *DB) ListNodes(ctx context.Context, f controlplane.NodeFilter) ([]*controlplane.Node, int, error) {
	var where []string
	var a args
	if f.State != "" {
		where = append(where, "state = "+a.add(string(f.State)))
	}
	if f.Vendor != "" {
		// @> narrows through the GIN index; the EXISTS keeps only snapshots
		// that list devices (devices may be JSON null, hence the CASE).
		v := a.add(f.Vendor)
		where = append(where, `inventory @> jsonb_build_array(jsonb_build_object('vendor', `+v+`::text))
			AND EXISTS (SELECT 1 FROM jsonb_array_elements(nodes.inventory) e WHERE e->>'vendor' = `+v+`::text
			AND CASE WHEN jsonb_typeof(e->'devices') = 'array' THEN jsonb_array_length(e->'devices') ELSE 0 END > 0)`)
	}
	if f.Query != "" {
		q := a.add(f.Query)
		where = append(where, "(strpos(id, "+q+") > 0 OR strpos(hostname, "+q+") > 0)")
	}
	var out []*controlplane.Node
	var total int
	err := db.readTx(ctx, func(tx pgx.Tx) error {
		var err error
		total, err = page(ctx, tx, "nodes", where, a, "id", f.Page, nodeCols, func(r pgx.Rows) error {
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
	inv, keep, err := storeutil.HeartbeatInventory(hb.Inventory)
	if err != nil {
		return nil, err
	}
	var invArg *string // NULL keeps the stored inventory
	if !keep {
		invArg = &inv
	}
	at := hb.At
	if at.IsZero() {
		at = db.now()
	}
	n, err := scanNode(db.pool.QueryRow(ctx, `UPDATE nodes SET state = 'online', health = $1, cpu_count = $2,
		memory_total_mib = $3, memory_free_mib = $4, inventory = COALESCE($5::jsonb, inventory), running = $6::jsonb,
		last_heartbeat = $7, updated_at = $8 WHERE id = $9 RETURNING `+nodeCols,
		hb.Health, hb.CPUCount, hb.MemoryTotalMiB, hb.MemoryFreeMiB, invArg, storeutil.RunningJSON(hb.Running),
		storeutil.Trunc(at), db.now(), id))
	if err != nil {
		return nil, fmt.Errorf("heartbeat of node %s: %w", id, err)
	}
	return n, nil
}

// MarkNodesOffline flips online nodes silent since before cutoff.
func (db *DB) MarkNodesOffline(ctx context.Context, cutoff time.Time) ([]string, error) {
	rows, err := db.pool.Query(ctx, `UPDATE nodes SET state = 'offline', updated_at = $1
		WHERE state = 'online' AND (last_heartbeat IS NULL OR last_heartbeat < $2) RETURNING id`,
		db.now(), storeutil.Trunc(cutoff))
	if err != nil {
		return nil, mapErr(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return ids, mapErr(err)
}

// SetNodeScheduling sets the cordon and drain flags.
func (db *DB) SetNodeScheduling(ctx context.Context, id string, cordoned, draining bool) (*controlplane.Node, error) {
	n, err := scanNode(db.pool.QueryRow(ctx, `UPDATE nodes SET cordoned = $1, draining = $2, updated_at = $3
		WHERE id = $4 RETURNING `+nodeCols, cordoned, draining, db.now(), id))
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", id, err)
	}
	return n, nil
}
