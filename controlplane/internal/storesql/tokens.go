package storesql

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

const tokenCols = `id, user_id, family, token_hash, expires_at, created_at, rotated_at, revoked_at, replaced_by`

func (q Queries) scanToken(row Row) (*controlplane.RefreshToken, error) {
	var t controlplane.RefreshToken
	d := q.db
	if err := row.Scan(&t.ID, &t.UserID, &t.Family, &t.TokenHash, d.ScanTime(&t.ExpiresAt), d.ScanTime(&t.CreatedAt),
		d.ScanNullTime(&t.RotatedAt), d.ScanNullTime(&t.RevokedAt), &t.ReplacedBy); err != nil {
		return nil, err
	}
	return &t, nil
}

// CreateRefreshToken stores t (hash only) and sets ID and CreatedAt.
// ErrNotFound when the user does not exist, ErrConflict on a duplicate hash.
func (q Queries) CreateRefreshToken(ctx context.Context, t *controlplane.RefreshToken) error {
	if err := storeutil.CheckRefreshToken(t); err != nil {
		return err
	}
	return q.db.Write(ctx, func(c Conn) error { return q.insertToken(ctx, c, t) })
}

func (q Queries) insertToken(ctx context.Context, c Conn, t *controlplane.RefreshToken) error {
	now := q.db.Now()
	t.ExpiresAt = storeutil.Trunc(t.ExpiresAt)
	err := c.QueryRow(ctx, `INSERT INTO refresh_tokens (user_id, family, token_hash, expires_at, created_at)
		VALUES ($1, $2, $3, $4, $5) RETURNING id`, t.UserID, t.Family, t.TokenHash, q.db.Time(t.ExpiresAt),
		q.db.Time(now)).Scan(&t.ID)
	if errors.Is(err, ErrForeignKey) {
		return fmt.Errorf("refresh token: user %d: %w", t.UserID, controlplane.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("create refresh token: %w", err)
	}
	t.CreatedAt, t.RotatedAt, t.RevokedAt, t.ReplacedBy = now, nil, nil, 0
	return nil
}

// GetRefreshTokenByHash returns the token with hash or ErrNotFound.
func (q Queries) GetRefreshTokenByHash(ctx context.Context, hash string) (*controlplane.RefreshToken, error) {
	t, err := q.scanToken(q.db.Reader().QueryRow(ctx, `SELECT `+tokenCols+` FROM refresh_tokens WHERE token_hash = $1`, hash))
	if err != nil {
		return nil, fmt.Errorf("refresh token: %w", err)
	}
	return t, nil
}

// RotateRefreshToken marks oldID rotated and inserts next in its family in one
// transaction. ErrConflict when oldID was already rotated or revoked (the
// caller then revokes the family: reuse detection), ErrNotFound when missing.
// The guarded UPDATE takes the row lock (SQLite: the write lock), so of
// racing rotations exactly one sees the token live.
func (q Queries) RotateRefreshToken(ctx context.Context, oldID int64, next *controlplane.RefreshToken) error {
	now := q.db.Now()
	return q.db.Tx(ctx, func(c Conn) error {
		var userID int64
		var family string
		err := c.QueryRow(ctx, `UPDATE refresh_tokens SET rotated_at = $1
			WHERE id = $2 AND rotated_at IS NULL AND revoked_at IS NULL RETURNING user_id, family`,
			q.db.Time(now), oldID).Scan(&userID, &family)
		if errors.Is(err, controlplane.ErrNotFound) {
			var one int
			if err := c.QueryRow(ctx, `SELECT 1 FROM refresh_tokens WHERE id = $1`, oldID).Scan(&one); err != nil {
				return fmt.Errorf("refresh token %d: %w", oldID, err)
			}
			return fmt.Errorf("%w: refresh token %d was already rotated or revoked", controlplane.ErrConflict, oldID)
		}
		if err != nil {
			return fmt.Errorf("rotate refresh token %d: %w", oldID, err)
		}
		if err := storeutil.PrepareRotation(next, userID, family); err != nil {
			return err
		}
		if err := q.insertToken(ctx, c, next); err != nil {
			return err
		}
		if _, err := c.Exec(ctx, `UPDATE refresh_tokens SET replaced_by = $1 WHERE id = $2`, next.ID, oldID); err != nil {
			return fmt.Errorf("rotate refresh token %d: %w", oldID, err)
		}
		return nil
	})
}

// RevokeRefreshFamily revokes every live token of family. Idempotent.
func (q Queries) RevokeRefreshFamily(ctx context.Context, family string, at time.Time) error {
	return q.db.Write(ctx, func(c Conn) error {
		if _, err := c.Exec(ctx, `UPDATE refresh_tokens SET revoked_at = $1
			WHERE family = $2 AND revoked_at IS NULL`, q.db.Time(storeutil.Trunc(at)), family); err != nil {
			return fmt.Errorf("revoke refresh family: %w", err)
		}
		return nil
	})
}

// RevokeUserRefreshTokens revokes every live token of the user. Idempotent.
func (q Queries) RevokeUserRefreshTokens(ctx context.Context, userID int64, at time.Time) error {
	return q.db.Write(ctx, func(c Conn) error {
		if _, err := c.Exec(ctx, `UPDATE refresh_tokens SET revoked_at = $1
			WHERE user_id = $2 AND revoked_at IS NULL`, q.db.Time(storeutil.Trunc(at)), userID); err != nil {
			return fmt.Errorf("revoke refresh tokens of user %d: %w", userID, err)
		}
		return nil
	})
}
