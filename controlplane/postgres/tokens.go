package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

const tokenCols = `id, user_id, family, token_hash, expires_at, created_at, rotated_at, revoked_at, replaced_by`

func scanToken(row pgx.Row) (*controlplane.RefreshToken, error) {
	var t controlplane.RefreshToken
	if err := row.Scan(&t.ID, &t.UserID, &t.Family, &t.TokenHash, &t.ExpiresAt, &t.CreatedAt,
		&t.RotatedAt, &t.RevokedAt, &t.ReplacedBy); err != nil {
		return nil, mapErr(err)
	}
	t.ExpiresAt, t.CreatedAt = utc(t.ExpiresAt), utc(t.CreatedAt)
	t.RotatedAt, t.RevokedAt = utcPtr(t.RotatedAt), utcPtr(t.RevokedAt)
	return &t, nil
}

// querier is what both the pool and a transaction offer.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// CreateRefreshToken stores t (hash only) and sets ID and CreatedAt.
// ErrNotFound when the user does not exist, ErrConflict on a duplicate hash.
func (db *DB) CreateRefreshToken(ctx context.Context, t *controlplane.RefreshToken) error {
	if err := storeutil.CheckRefreshToken(t); err != nil {
		return err
	}
	return db.insertToken(ctx, db.pool, t)
}

func (db *DB) insertToken(ctx context.Context, q querier, t *controlplane.RefreshToken) error {
	now := db.now()
	t.ExpiresAt = storeutil.Trunc(t.ExpiresAt)
	err := q.QueryRow(ctx, `INSERT INTO refresh_tokens (user_id, family, token_hash, expires_at, created_at)
		VALUES ($1, $2, $3, $4, $5) RETURNING id`, t.UserID, t.Family, t.TokenHash, t.ExpiresAt, now).Scan(&t.ID)
	if isForeignKey(err) {
		return fmt.Errorf("refresh token: user %d: %w", t.UserID, controlplane.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("create refresh token: %w", mapErr(err))
	}
	t.CreatedAt, t.RotatedAt, t.RevokedAt, t.ReplacedBy = now, nil, nil, 0
	return nil
}

// GetRefreshTokenByHash returns the token with hash or ErrNotFound.
func (db *DB) GetRefreshTokenByHash(ctx context.Context, hash string) (*controlplane.RefreshToken, error) {
	t, err := scanToken(db.pool.QueryRow(ctx, `SELECT `+tokenCols+` FROM refresh_tokens WHERE token_hash = $1`, hash))
	if err != nil {
		return nil, fmt.Errorf("refresh token: %w", err)
	}
	return t, nil
}

// RotateRefreshToken marks oldID rotated and inserts next in its family in one
// transaction. ErrConflict when oldID was already rotated or revoked (the
// caller then revokes the family: reuse detection), ErrNotFound when missing.
// The guarded UPDATE takes the row lock, so of racing rotations exactly one
// sees the token live.
func (db *DB) RotateRefreshToken(ctx context.Context, oldID int64, next *controlplane.RefreshToken) error {
	now := db.now()
	return db.tx(ctx, func(tx pgx.Tx) error {
		var userID int64
		var family string
		err := tx.QueryRow(ctx, `UPDATE refresh_tokens SET rotated_at = $1
			WHERE id = $2 AND rotated_at IS NULL AND revoked_at IS NULL RETURNING user_id, family`,
			now, oldID).Scan(&userID, &family)
		if err != nil {
			err = mapErr(err)
			if errors.Is(err, controlplane.ErrNotFound) {
				return tokenGuardError(ctx, tx, oldID)
			}
			return fmt.Errorf("rotate refresh token %d: %w", oldID, err)
		}
		if err := storeutil.PrepareRotation(next, userID, family); err != nil {
			return err
		}
		if err := db.insertToken(ctx, tx, next); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE refresh_tokens SET replaced_by = $1 WHERE id = $2`, next.ID, oldID); err != nil {
			return fmt.Errorf("rotate refresh token %d: %w", oldID, mapErr(err))
		}
		return nil
	})
}

func tokenGuardError(ctx context.Context, tx pgx.Tx, id int64) error {
	var one int
	if err := tx.QueryRow(ctx, `SELECT 1 FROM refresh_tokens WHERE id = $1`, id).Scan(&one); err != nil {
		return fmt.Errorf("refresh token %d: %w", id, mapErr(err))
	}
	return fmt.Errorf("%w: refresh token %d was already rotated or revoked", controlplane.ErrConflict, id)
}

// RevokeRefreshFamily revokes every live token of family. Idempotent.
func (db *DB) RevokeRefreshFamily(ctx context.Context, family string, at time.Time) error {
	if _, err := db.pool.Exec(ctx, `UPDATE refresh_tokens SET revoked_at = $1
		WHERE family = $2 AND revoked_at IS NULL`, storeutil.Trunc(at), family); err != nil {
		return fmt.Errorf("revoke refresh family: %w", mapErr(err))
	}
	return nil
}

// RevokeUserRefreshTokens revokes every live token of the user. Idempotent.
func (db *DB) RevokeUserRefreshTokens(ctx context.Context, userID int64, at time.Time) error {
	if _, err := db.pool.Exec(ctx, `UPDATE refresh_tokens SET revoked_at = $1
		WHERE user_id = $2 AND revoked_at IS NULL`, storeutil.Trunc(at), userID); err != nil {
		return fmt.Errorf("revoke refresh tokens of user %d: %w", userID, mapErr(err))
	}
	return nil
}
