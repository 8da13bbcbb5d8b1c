package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

const apiKeyCols = `id, name, prefix, secret_hash, role, COALESCE(owner_id, 0), node_id, expires_at,
	last_used_at, revoked_at, created_at`

func scanAPIKey(row interface{ Scan(...any) error }) (*controlplane.APIKey, error) {
	var k controlplane.APIKey
	var expires, used, revoked sql.NullInt64
	var created int64
	if err := row.Scan(&k.ID, &k.Name, &k.Prefix, &k.SecretHash, &k.Role, &k.OwnerID, &k.NodeID,
		&expires, &used, &revoked, &created); err != nil {
		return nil, mapErr(err)
	}
	k.ExpiresAt, k.LastUsedAt, k.RevokedAt = fromNullTS(expires), fromNullTS(used), fromNullTS(revoked)
	k.CreatedAt = fromTS(created)
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
	return db.write(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `INSERT INTO api_keys (name, prefix, secret_hash, role, owner_id,
			node_id, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			k.Name, k.Prefix, k.SecretHash, k.Role, nullID(k.OwnerID), k.NodeID,
			tsPtr(k.ExpiresAt), ts(now)).Scan(&k.ID)
		if isForeignKey(err) {
			return fmt.Errorf("api key owner %d: %w", k.OwnerID, controlplane.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("create api key: %w", mapErr(err))
		}
		k.CreatedAt, k.LastUsedAt, k.RevokedAt = now, nil, nil
		return nil
	})
}

// GetAPIKeyByPrefix returns the key with prefix (revoked ones included; the
// caller checks RevokedAt and ExpiresAt) or ErrNotFound.
func (db *DB) GetAPIKeyByPrefix(ctx context.Context, prefix string) (*controlplane.APIKey, error) {
	k, err := scanAPIKey(db.r.QueryRowContext(ctx, `SELECT `+apiKeyCols+` FROM api_keys WHERE prefix = ?`, prefix))
	if err != nil {
		return nil, fmt.Errorf("api key %q: %w", prefix, err)
	}
	return k, nil
}

// ListAPIKeys lists keys newest first; ownerID 0 lists all.
func (db *DB) ListAPIKeys(ctx context.Context, ownerID int64, p controlplane.Page) ([]*controlplane.APIKey, int, error) {
	var where []string
	var args []any
	if ownerID != 0 {
		where, args = append(where, "owner_id = ?"), append(args, ownerID)
	}
	out := []*controlplane.APIKey{}
	var total int
	err := db.read(ctx, func(tx *sql.Tx) error {
		var err error
		total, err = page(ctx, tx, "api_keys", where, args, "id DESC", p, apiKeyCols, func(rows *sql.Rows) error {
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
	return db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?`,
			ts(storeutil.Trunc(at)), id)
		if err != nil {
			return fmt.Errorf("revoke api key %d: %w", id, mapErr(err))
		}
		return affected(res, fmt.Sprintf("api key %d", id))
	})
}

// TouchAPIKey records a use of the key.
func (db *DB) TouchAPIKey(ctx context.Context, id int64, at time.Time) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE api_keys SET last_used_at = ? WHERE id = ?`,
			ts(storeutil.Trunc(at)), id)
		if err != nil {
			return fmt.Errorf("touch api key %d: %w", id, mapErr(err))
		}
		return affected(res, fmt.Sprintf("api key %d", id))
	})
}
