package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

const tokenCols = `id, user_id, family, token_hash, expires_at, created_at, rotated_at, revoked_at, replaced_by`

func scanToken(row interface{ Scan(...any) error }) (*controlplane.RefreshToken, error) {
	var t controlplane.RefreshToken
	var expires, created int64
	var rotated, revoked sql.NullInt64
	if err := row.Scan(&t.ID, &t.UserID, &t.Family, &t.TokenHash, &expires, &created,
		&rotated, &revoked, &t.ReplacedBy); err != nil {
		return nil, mapErr(err)
	}
	t.ExpiresAt, t.CreatedAt = fromTS(expires), fromTS(created)
	t.RotatedAt, t.RevokedAt = fromNullTS(rotated), fromNullTS(revoked)
	return &t, nil
}

// CreateRefreshToken stores t (hash only) and sets ID and CreatedAt.
// ErrNotFound when the user does not exist, ErrConflict on a duplicate hash.
func (db *DB) CreateRefreshToken(ctx context.Context, t *controlplane.RefreshToken) error {
	if err := storeutil.CheckRefreshToken(t); err != nil {
		return err
	}
	return db.write(ctx, func(tx *sql.Tx) error { return db.insertToken(ctx, tx, t) })
}

func (db *DB) insertToken(ctx context.Context, tx *sql.Tx, t *controlplane.RefreshToken) error {
	now := db.now()
	t.ExpiresAt = storeutil.Trunc(t.ExpiresAt)
	err := tx.QueryRowContext(ctx, `INSERT INTO refresh_tokens (user_id, family, token_hash, expires_at,
		created_at) VALUES (?, ?, ?, ?, ?) RETURNING id`,
		t.UserID, t.Family, t.TokenHash, ts(t.ExpiresAt), ts(now)).Scan(&t.ID)
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
	t, err := scanToken(db.r.QueryRowContext(ctx,
		`SELECT `+tokenCols+` FROM refresh_tokens WHERE token_hash = ?`, hash))
	if err != nil {
		return nil, fmt.Errorf("refresh token: %w", err)
	}
	return t, nil
}

// RotateRefreshToken marks oldID rotated and inserts next in its family in one
// transaction. ErrConflict when oldID was already rotated or revoked (the
// caller then revokes the family: reuse detection), ErrNotFound when missing.
func (db *DB) RotateRefreshToken(ctx context.Context, oldID int64, next *controlplane.RefreshToken) error {
	now := db.now()
	return db.write(ctx, func(tx *sql.Tx) error {
		var userID int64
		var family string
		err := tx.QueryRowContext(ctx, `UPDATE refresh_tokens SET rotated_at = ?
			WHERE id = ? AND rotated_at IS NULL AND revoked_at IS NULL RETURNING user_id, family`,
			ts(now), oldID).Scan(&userID, &family)
		if err != nil {
			err = mapErr(err)
			if errors.Is(err, controlplane.ErrNotFound) {
				return db.tokenGuardError(ctx, tx, oldID)
			}
			return fmt.Errorf("rotate refresh token %d: %w", oldID, err)
		}
		if err := storeutil.PrepareRotation(next, userID, family); err != nil {
			return err
		}
		if err := db.insertToken(ctx, tx, next); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE refresh_tokens SET replaced_by = ? WHERE id = ?`,
			next.ID, oldID); err != nil {
			return fmt.Errorf("rotate refresh token %d: %w", oldID, mapErr(err))
		}
		return nil
	})
}

func (db *DB) tokenGuardError(ctx context.Context, tx *sql.Tx, id int64) error {
	var one int
	err := tx.QueryRowContext(ctx, `SELECT 1 FROM refresh_tokens WHERE id = ?`, id).Scan(&one)
	if err != nil {
		return fmt.Errorf("refresh token %d: %w", id, mapErr(err))
	}
	return fmt.Errorf("%w: refresh token %d was already rotated or revoked", controlplane.ErrConflict, id)
}

// RevokeRefreshFamily revokes every live token of family. Idempotent.
func (db *DB) RevokeRefreshFamily(ctx context.Context, family string, at time.Time) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE refresh_tokens SET revoked_at = ?
			WHERE family = ? AND revoked_at IS NULL`, ts(storeutil.Trunc(at)), family)
		if err != nil {
			return fmt.Errorf("revoke refresh family: %w", mapErr(err))
		}
		return nil
	})
}

// RevokeUserRefreshTokens revokes every live token of the user. Idempotent.
func (db *DB) RevokeUserRefreshTokens(ctx context.Context, userID int64, at time.Time) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE refresh_tokens SET revoked_at = ?
			WHERE user_id = ? AND revoked_at IS NULL`, ts(storeutil.Trunc(at)), userID)
		if err != nil {
			return fmt.Errorf("revoke refresh tokens of user %d: %w", userID, mapErr(err))
		}
		return nil
	})
}
