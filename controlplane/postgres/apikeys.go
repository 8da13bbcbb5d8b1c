package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

const apiKeyCols = `id, name, prefix, secret_hash, role, COALESCE(owner_id, 0), node_id, expires_at,
	last_used_at, revoked_at, created_at`

func scanAPIKey(row pgx.Row) (*controlplane.APIKey, error) {
	var k controlplane.APIKey
	if err := row.Scan(&k.ID, &k.Name, &k.Prefix, &k.SecretHash, &k.Role, &k.OwnerID, &k.NodeID,
		&k.ExpiresAt, &k.LastUsedAt, &k.RevokedAt, &k.CreatedAt); err != nil {
		return nil, mapErr(err)
	}
	k.ExpiresAt, k.LastUsedAt, k.RevokedAt = utcPtr(k.ExpiresAt), utcPtr(k.LastUsedAt), utcPtr(k.RevokedAt)
	k.CreatedAt = utc(k.CreatedAt)
	return &k, nil
}

// CreateAPIKey stores k (hash only) and sets ID and CreatedAt. ErrConflict
// when the prefix is taken, ErrNotFound when the owner does not exist.
func (db *DB) CreateAPIKey(ctx context.Context, k *controlplane.APIKey) error {
	if err := storeutil.CheckAPIKey(k); err != nil {
		return err
	}
	now := db.now()
	k.ExpiresAt = storeutil.TruncPtr(k.ExpiresAt)
	err := db.pool.QueryRow(ctx, `INSERT INTO api_keys (name, prefix, secret_hash, role, owner_id, node_id,
		expires_at, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
		k.Name, k.Prefix, k.SecretHash, k.Role, nullID(k.OwnerID), k.NodeID, k.ExpiresAt, now).Scan(&k.ID)
	if isForeignKey(err) {
		return fmt.Errorf("api key owner %d: %w", k.OwnerID, controlplane.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("create api key: %w", mapErr(err))
	}
	k.CreatedAt, k.LastUsedAt, k.RevokedAt = now, nil, nil
	return nil
}

// GetAPIKeyByPrefix returns the key with prefix (revoked ones included; the
// caller checks RevokedAt and ExpiresAt) or ErrNotFound.
func (db *DB) GetAPIKeyByPrefix(ctx context.Context, prefix string) (*controlplane.APIKey, error) {
	k, err := scanAPIKey(db.pool.QueryRow(ctx, `SELECT `+apiKeyCols+` FROM api_keys WHERE prefix = $1`, prefix))
	if err != nil {
		return nil, fmt.Errorf("api key %q: %w", prefix, err)
	}
	return k, nil
}

// ListAPIKeys lists keys newest first; ownerID 0 lists all.
func (db *DB) ListAPIKeys(ctx context.Context, ownerID int64, p controlplane.Page) ([]*controlplane.APIKey, int, error) {
	var where []string
	var a args
	if ownerID != 0 {
		where = append(where, "owner_id = "+a.add(ownerID))
	}
	out := []*controlplane.APIKey{}
	var total int
	err := db.readTx(ctx, func(tx pgx.Tx) error {
		var err error
		total, err = page(ctx, tx, "api_keys", where, a, "id DESC", p, apiKeyCols, func(rows pgx.Rows) error {
			k, err := scanAPIKey(rows)
			if err == nil {
				out = append(out, k)
			}
			return err
		})
		return err
	})
	if err != nil {
		return nil, 0, fmt.Errorf("list api keys: %w", err)
	}
	return out, total, nil
}

// RevokeAPIKey sets RevokedAt; revoking a revoked key keeps the first time.
// ErrNotFound when the key does not exist.
func (db *DB) RevokeAPIKey(ctx context.Context, id int64, at time.Time) error {
	tag, err := db.pool.Exec(ctx, `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $1) WHERE id = $2`,
		storeutil.Trunc(at), id)
	if err != nil {
		return fmt.Errorf("revoke api key %d: %w", id, mapErr(err))
	}
	return affected(tag, fmt.Sprintf("api key %d", id))
}

// TouchAPIKey records a use of the key.
func (db *DB) TouchAPIKey(ctx context.Context, id int64, at time.Time) error {
	tag, err := db.pool.Exec(ctx, `UPDATE api_keys SET last_used_at = $1 WHERE id = $2`, storeutil.Trunc(at), id)
	if err != nil {
		return fmt.Errorf("touch api key %d: %w", id, mapErr(err))
	}
	return affected(tag, fmt.Sprintf("api key %d", id))
}
