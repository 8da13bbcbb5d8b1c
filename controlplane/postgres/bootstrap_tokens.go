package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

const bootstrapTokenCols = `id, prefix, token_hash, description, created_by, created_at, expires_at, used_at, node_id`

func scanBootstrapToken(row pgx.Row) (*controlplane.BootstrapToken, error) {
	var t controlplane.BootstrapToken
	if err := row.Scan(&t.ID, &t.Prefix, &t.TokenHash, &t.Description, &t.CreatedBy, &t.CreatedAt, &t.ExpiresAt,
		&t.UsedAt, &t.NodeID); err != nil {
		return nil, mapErr(err)
	}
	t.CreatedAt, t.ExpiresAt, t.UsedAt = utc(t.CreatedAt), utc(t.ExpiresAt), utcPtr(t.UsedAt)
	return &t, nil
}

// CreateBootstrapToken stores t (its hash) and sets ID and CreatedAt.
func (db *DB) CreateBootstrapToken(ctx context.Context, t *controlplane.BootstrapToken) error {
	t.CreatedAt = db.now()
	err := db.pool.QueryRow(ctx, `INSERT INTO bootstrap_tokens (prefix, token_hash, description, created_by,
		created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`, t.Prefix, t.TokenHash, t.Description,
		t.CreatedBy, t.CreatedAt, storeutil.Trunc(t.ExpiresAt)).Scan(&t.ID)
	if err != nil {
		return fmt.Errorf("insert bootstrap token: %w", mapErr(err))
	}
	return nil
}

// ListBootstrapTokens returns tokens newest first.
func (db *DB) ListBootstrapTokens(ctx context.Context, p controlplane.Page) ([]*controlplane.BootstrapToken, int, error) {
	var out []*controlplane.BootstrapToken
	var total int
	err := db.readTx(ctx, func(tx pgx.Tx) error {
		var err error
		total, err = page(ctx, tx, "bootstrap_tokens", nil, nil, "id DESC", p, bootstrapTokenCols, func(r pgx.Rows) error {
			t, err := scanBootstrapToken(r)
			if err == nil {
				out = append(out, t)
			}
			return err
		})
		return err
	})
	return out, total, err
}

// GetBootstrapTokenByHash finds a token by the hash of its secret.
func (db *DB) GetBootstrapTokenByHash(ctx context.Context, hash string) (*controlplane.BootstrapToken, error) {
	return scanBootstrapToken(db.pool.QueryRow(ctx, `SELECT `+bootstrapTokenCols+` FROM bootstrap_tokens WHERE token_hash = $1`, hash))
}

// DeleteBootstrapToken removes a token (used or not).
func (db *DB) DeleteBootstrapToken(ctx context.Context, id int64) error {
	tag, err := db.pool.Exec(ctx, `DELETE FROM bootstrap_tokens WHERE id = $1`, id)
	if err != nil {
		return mapErr(err)
	}
	return affected(tag, fmt.Sprintf("bootstrap token %d", id))
}
