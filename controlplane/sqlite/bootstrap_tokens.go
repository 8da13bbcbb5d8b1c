package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/heteroflow/heteroflow/controlplane"
)

const bootstrapTokenCols = `id, prefix, token_hash, description, created_by, created_at, expires_at, used_at, node_id`

func scanBootstrapToken(row interface{ Scan(...any) error }) (*controlplane.BootstrapToken, error) {
	var t controlplane.BootstrapToken
	var created, expires int64
	var used sql.NullInt64
	if err := row.Scan(&t.ID, &t.Prefix, &t.TokenHash, &t.Description, &t.CreatedBy, &created, &expires,
		&used, &t.NodeID); err != nil {
		return nil, mapErr(err)
	}
	t.CreatedAt, t.ExpiresAt, t.UsedAt = fromTS(created), fromTS(expires), fromNullTS(used)
	return &t, nil
}

// CreateBootstrapToken stores t (its hash) and sets ID and CreatedAt.
func (db *DB) CreateBootstrapToken(ctx context.Context, t *controlplane.BootstrapToken) error {
	t.CreatedAt = db.now()
	return db.write(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `INSERT INTO bootstrap_tokens (prefix, token_hash, description, created_by,
			created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id`, t.Prefix, t.TokenHash, t.Description,
			t.CreatedBy, ts(t.CreatedAt), ts(t.ExpiresAt)).Scan(&t.ID)
		if err != nil {
			return fmt.Errorf("insert bootstrap token: %w", mapErr(err))
		}
		return nil
	})
}

// ListBootstrapTokens returns tokens newest first.
func (db *DB) ListBootstrapTokens(ctx context.Context, p controlplane.Page) ([]*controlplane.BootstrapToken, int, error) {
	var out []*controlplane.BootstrapToken
	var total int
	err := db.read(ctx, func(tx *sql.Tx) error {
		var err error
		total, err = page(ctx, tx, "bootstrap_tokens", nil, nil, "id DESC", p, bootstrapTokenCols, func(r *sql.Rows) error {
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
	var t *controlplane.BootstrapToken
	err := db.read(ctx, func(tx *sql.Tx) error {
		var err error
		t, err = scanBootstrapToken(tx.QueryRowContext(ctx, `SELECT `+bootstrapTokenCols+` FROM bootstrap_tokens WHERE token_hash = ?`, hash))
		return err
	})
	return t, err
}

// DeleteBootstrapToken removes a token (used or not).
func (db *DB) DeleteBootstrapToken(ctx context.Context, id int64) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM bootstrap_tokens WHERE id = ?`, id)
		if err != nil {
			return mapErr(err)
		}
		return affected(res, fmt.Sprintf("bootstrap token %d", id))
	})
}
