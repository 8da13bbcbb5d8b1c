package storesql

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

// API keys and node bootstrap tokens.

const apiKeyCols = `id, name, prefix, secret_hash, role, COALESCE(owner_id, 0), node_id, expires_at,
	last_used_at, revoked_at, created_at, tenant`

func (q Queries) scanAPIKey(row Row) (*controlplane.APIKey, error) {
	var k controlplane.APIKey
	d := q.db
	if err := row.Scan(&k.ID, &k.Name, &k.Prefix, &k.SecretHash, &k.Role, &k.OwnerID, &k.NodeID,
		d.ScanNullTime(&k.ExpiresAt), d.ScanNullTime(&k.LastUsedAt), d.ScanNullTime(&k.RevokedAt),
		d.ScanTime(&k.CreatedAt), &k.Tenant); err != nil {
		return nil, err
	}
	return &k, nil
}

// CreateAPIKey stores k (hash only) and sets ID and CreatedAt. ErrConflict
// when the prefix is taken, ErrNotFound when the owner does not exist.
func (q Queries) CreateAPIKey(ctx context.Context, k *controlplane.APIKey) error {
	if err := storeutil.CheckAPIKey(k); err != nil {
		return err
	}
	now := q.db.Now()
	k.ExpiresAt = storeutil.TruncPtr(k.ExpiresAt)
	return q.db.Write(ctx, func(c Conn) error {
		err := c.QueryRow(ctx, `INSERT INTO api_keys (name, prefix, secret_hash, role, owner_id, node_id,
			expires_at, created_at, tenant) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`,
			k.Name, k.Prefix, k.SecretHash, k.Role, NullID(k.OwnerID), k.NodeID, q.db.NullTime(k.ExpiresAt),
			q.db.Time(now), k.Tenant).Scan(&k.ID)
		if errors.Is(err, ErrForeignKey) {
			return fmt.Errorf("api key owner %d: %w", k.OwnerID, controlplane.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("create api key: %w", err)
		}
		k.CreatedAt, k.LastUsedAt, k.RevokedAt = now, nil, nil
		return nil
	})
}

// GetAPIKeyByPrefix returns the key with prefix (revoked ones included; the
// caller checks RevokedAt and ExpiresAt) or ErrNotFound.
func (q Queries) GetAPIKeyByPrefix(ctx context.Context, prefix string) (*controlplane.APIKey, error) {
	k, err := q.scanAPIKey(q.db.Reader().QueryRow(ctx, `SELECT `+apiKeyCols+` FROM api_keys WHERE prefix = $1`, prefix))
	if err != nil {
		return nil, fmt.Errorf("api key %q: %w", prefix, err)
	}
	return k, nil
}

// ListAPIKeys lists keys newest first; ownerID 0 lists all.
func (q Queries) ListAPIKeys(ctx context.Context, ownerID int64, p controlplane.Page) ([]*controlplane.APIKey, int, error) {
	var where []string
	a := q.args()
	if ownerID != 0 {
		where = append(where, "owner_id = "+a.Add(ownerID))
	}
	out := []*controlplane.APIKey{}
	var total int
	err := q.db.ReadTx(ctx, func(c Conn) error {
		var err error
		total, err = page(ctx, c, "api_keys", where, a, "id DESC", p, apiKeyCols, q.scanAPIKey, &out)
		return err
	})
	if err != nil {
		return nil, 0, fmt.Errorf("list api keys: %w", err)
	}
	return out, total, nil
}

// RevokeAPIKey sets RevokedAt; revoking a revoked key keeps the first time.
// ErrNotFound when the key does not exist.
func (q Queries) RevokeAPIKey(ctx context.Context, id int64, at time.Time) error {
	return q.db.Write(ctx, func(c Conn) error {
		n, err := c.Exec(ctx, `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $1) WHERE id = $2`,
			q.db.Time(storeutil.Trunc(at)), id)
		return affected(n, err, fmt.Sprintf("api key %d", id))
	})
}

// TouchAPIKey records a use of the key.
func (q Queries) TouchAPIKey(ctx context.Context, id int64, at time.Time) error {
	return q.db.Write(ctx, func(c Conn) error {
		n, err := c.Exec(ctx, `UPDATE api_keys SET last_used_at = $1 WHERE id = $2`, q.db.Time(storeutil.Trunc(at)), id)
		return affected(n, err, fmt.Sprintf("api key %d", id))
	})
}

const bootstrapTokenCols = `id, prefix, token_hash, description, created_by, created_at, expires_at, used_at, node_id`

func (q Queries) scanBootstrapToken(row Row) (*controlplane.BootstrapToken, error) {
	var t controlplane.BootstrapToken
	d := q.db
	if err := row.Scan(&t.ID, &t.Prefix, &t.TokenHash, &t.Description, &t.CreatedBy, d.ScanTime(&t.CreatedAt),
		d.ScanTime(&t.ExpiresAt), d.ScanNullTime(&t.UsedAt), &t.NodeID); err != nil {
		return nil, err
	}
	return &t, nil
}

// CreateBootstrapToken stores t (its hash) and sets ID and CreatedAt.
func (q Queries) CreateBootstrapToken(ctx context.Context, t *controlplane.BootstrapToken) error {
	t.CreatedAt = q.db.Now()
	return q.db.Write(ctx, func(c Conn) error {
		err := c.QueryRow(ctx, `INSERT INTO bootstrap_tokens (prefix, token_hash, description, created_by,
			created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`, t.Prefix, t.TokenHash, t.Description,
			t.CreatedBy, q.db.Time(t.CreatedAt), q.db.Time(storeutil.Trunc(t.ExpiresAt))).Scan(&t.ID)
		if err != nil {
			return fmt.Errorf("insert bootstrap token: %w", err)
		}
		return nil
	})
}

// ListBootstrapTokens returns tokens newest first.
func (q Queries) ListBootstrapTokens(ctx context.Context, p controlplane.Page) ([]*controlplane.BootstrapToken, int, error) {
	var out []*controlplane.BootstrapToken
	var total int
	err := q.db.ReadTx(ctx, func(c Conn) error {
		var err error
		total, err = page(ctx, c, "bootstrap_tokens", nil, q.args(), "id DESC", p, bootstrapTokenCols, q.scanBootstrapToken, &out)
		return err
	})
	return out, total, err
}

// GetBootstrapTokenByHash finds a token by the hash of its secret.
func (q Queries) GetBootstrapTokenByHash(ctx context.Context, hash string) (*controlplane.BootstrapToken, error) {
	return q.scanBootstrapToken(q.db.Reader().QueryRow(ctx,
		`SELECT `+bootstrapTokenCols+` FROM bootstrap_tokens WHERE token_hash = $1`, hash))
}

// DeleteBootstrapToken removes a token (used or not).
func (q Queries) DeleteBootstrapToken(ctx context.Context, id int64) error {
	return q.db.Write(ctx, func(c Conn) error {
		n, err := c.Exec(ctx, `DELETE FROM bootstrap_tokens WHERE id = $1`, id)
		return affected(n, err, fmt.Sprintf("bootstrap token %d", id))
	})
}
