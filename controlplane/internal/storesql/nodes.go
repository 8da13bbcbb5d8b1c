package storesql

import (
	"context"
	"fmt"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

// nodeCols are a node's columns; nodeListCols leave out the inventory,
// which a list reads only for the nodes whose inventory hash it does not
// hold decoded (fillInventories).
const (
	nodeColsHead = `id, hostname, os, arch, version, labels, state, cordoned, draining, health, cpu_count,
	memory_total_mib, memory_free_mib, `
	nodeColsTail = `running, api_key_prefix, last_heartbeat, last_status_seq, created_at, updated_at, inventory_hash`
	nodeCols     = nodeColsHead + `inventory, ` + nodeColsTail
	nodeListCols = nodeColsHead + nodeColsTail
)

func (q Queries) scanNode(row Row) (*controlplane.Node, error) {
	var inv []byte
	n, hash, err := q.scanNodeCols(row, &inv)
	if err != nil {
		return nil, err
	}
	if n.Inventory, err = q.inv.decode(n.ID, hash, inv); err != nil {
		return nil, err
	}
	return n, nil
}

// scanNodeCols scans nodeCols, or nodeListCols when inv is nil (the
// inventory is then left for the caller, with the hash returned).
func (q Queries) scanNodeCols(row Row, inv *[]byte) (*controlplane.Node, string, error) {
	var n controlplane.Node
	var labels, running []byte
	var seq int64
	var hash string
	d := q.db
	dest := []any{&n.ID, &n.Hostname, &n.OS, &n.Arch, &n.Version, &labels, &n.State, &n.Cordoned,
		&n.Draining, &n.Health, &n.CPUCount, &n.MemoryTotalMiB, &n.MemoryFreeMiB}
	if inv != nil {
		dest = append(dest, inv)
	}
	dest = append(dest, &running, &n.APIKeyPrefix, d.ScanNullTime(&n.LastHeartbeat), &seq, d.ScanTime(&n.CreatedAt),
		d.ScanTime(&n.UpdatedAt), &hash)
	if err := row.Scan(dest...); err != nil {
		return nil, "", err
	}
	if err := storeutil.DecodeNode(&n, labels, []byte("null"), running); err != nil {
		return nil, "", err
	}
	n.LastStatusSeq = uint64(seq)
	return &n, hash, nil
}

// fillInventories sets the inventories of listed nodes: from the cache
// where it holds the node's current hash, else read and decoded (one
// statement for all of them).
func (q Queries) fillInventories(ctx context.Context, c Conn, nodes []*controlplane.Node, hashes map[string]string) error {
	byID := map[string]*controlplane.Node{}
	var missing []string
	for _, n := range nodes {
		if inv, ok := q.inv.lookup(n.ID, hashes[n.ID]); ok {
			n.Inventory = inv
			continue
		}
		byID[n.ID] = n
		missing = append(missing, n.ID)
	}
	if len(missing) == 0 {
		return nil
	}
	a := q.args()
	type stored struct {
		id, hash string
		raw      []byte
	}
	rows, err := all(ctx, c, func(r Row) (stored, error) {
		var s stored
		return s, r.Scan(&s.id, &s.raw, &s.hash)
	}, `SELECT id, inventory, inventory_hash FROM nodes WHERE id IN (`+q.inList(a, missing)+`)`, a.Vals...)
	if err != nil {
		return err
	}
	for _, s := range rows {
		inv, err := q.inv.decode(s.id, s.hash, s.raw)
		if err != nil {
			return err
		}
		byID[s.id].Inventory = inv
	}
	return nil
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
			created_at, updated_at, inventory_hash) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $14, $14, $15)`,
			n.ID, n.Hostname, n.OS, n.Arch, n.Version, labels, n.State, n.Health, n.CPUCount, n.MemoryTotalMiB,
			n.MemoryFreeMiB, inv, n.APIKeyPrefix, q.db.Time(now), storeutil.InventoryHash(inv)); err != nil {
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
		hashes := map[string]string{}
		scan := func(r Row) (*controlplane.Node, error) {
			n, hash, err := q.scanNodeCols(r, nil)
			if err == nil {
				hashes[n.ID] = hash
			}
			return n, err
		}
		var err error
		if total, err = page(ctx, c, "nodes", where, a, "id", f.Page, nodeListCols, scan, &out); err != nil {
			return err
		}
		return q.fillInventories(ctx, c, out, hashes)
	})
	return out, total, err
}

// RecordHeartbeat stores a heartbeat and marks the node online.
func (q Queries) RecordHeartbeat(ctx context.Context, id string, hb controlplane.NodeHeartbeat) (*controlplane.Node, error) {
	var inv, hash any // NULL keeps the stored inventory and its hash
	s, keep, err := storeutil.HeartbeatInventory(hb.Inventory)
	if err != nil {
		return nil, err
	}
	if !keep {
		inv, hash = s, storeutil.InventoryHash(s)
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
			last_heartbeat = $7, updated_at = $8, inventory_hash = COALESCE($10, inventory_hash) WHERE id = $9 RETURNING `+nodeCols,
			hb.Health, hb.CPUCount, hb.MemoryTotalMiB, hb.MemoryFreeMiB, inv, storeutil.RunningJSON(hb.Running),
			q.db.Time(storeutil.Trunc(at)), q.db.Time(q.db.Now()), id, hash))
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
