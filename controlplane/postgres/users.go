package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

const userCols = `id, username, display_name, email, role, status, tenant, password_hash,
	failed_logins, locked_until, created_at, updated_at, lockouts`

func scanUser(row pgx.Row) (*controlplane.User, error) {
	var u controlplane.User
	if err := row.Scan(&u.ID, &u.Username, &u.DisplayName, &u.Email, &u.Role, &u.Status, &u.Tenant,
		&u.PasswordHash, &u.FailedLogins, &u.LockedUntil, &u.CreatedAt, &u.UpdatedAt, &u.Lockouts); err != nil {
		return nil, mapErr(err)
	}
	u.LockedUntil = utcPtr(u.LockedUntil)
	u.CreatedAt, u.UpdatedAt = utc(u.CreatedAt), utc(u.UpdatedAt)
	return &u, nil
}

// CreateUser inserts u and sets its ID and timestamps; ErrConflict when the
// username is taken.
func (db *DB) CreateUser(ctx context.Context, u *controlplane.User) error {
	if err := storeutil.PrepareUser(u); err != nil {
		return err
	}
	now := db.now()
	u.LockedUntil = storeutil.TruncPtr(u.LockedUntil)
	err := db.pool.QueryRow(ctx, `INSERT INTO users (username, display_name, email, role, status,
		tenant, password_hash, failed_logins, locked_until, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10) RETURNING id`,
		u.Username, u.DisplayName, u.Email, u.Role, u.Status, u.Tenant, u.PasswordHash,
		u.FailedLogins, u.LockedUntil, now).Scan(&u.ID)
	if err != nil {
		return fmt.Errorf("create user %q: %w", u.Username, mapErr(err))
	}
	u.CreatedAt, u.UpdatedAt = now, now
	return nil
}

// GetUser returns the user with id or ErrNotFound.
func (db *DB) GetUser(ctx context.Context, id int64) (*controlplane.User, error) {
	u, err := scanUser(db.pool.QueryRow(ctx, `SELECT `+userCols+` FROM users WHERE id = $1`, id))
	if err != nil {
		return nil, fmt.Errorf("user %d: %w", id, err)
	}
	return u, nil
}

// GetUserByName returns the user with username or ErrNotFound.
func (db *DB) GetUserByName(ctx context.Context, username string) (*controlplane.User, error) {
	u, err := scanUser(db.pool.QueryRow(ctx, `SELECT `+userCols+` FROM users WHERE username = $1`, username))
	if err != nil {
		return nil, fmt.Errorf("user %q: %w", username, err)
	}
	return u, nil
}

// ListUsers returns one page of users ordered by id, and the total matching f.
func (db *DB) ListUsers(ctx context.Context, f controlplane.UserFilter) ([]*controlplane.User, int, error) {
	var where []string
	var a args
	if f.Role != "" {
		where = append(where, "role = "+a.add(f.Role))
	}
	if f.Status != "" {
		where = append(where, "status = "+a.add(f.Status))
	}
	if f.Query != "" {
		p := a.add(storeutil.ContainsPattern(f.Query))
		where = append(where, fmt.Sprintf(`(username ILIKE %[1]s ESCAPE '\' OR display_name ILIKE %[1]s ESCAPE '\'
			OR email ILIKE %[1]s ESCAPE '\')`, p))
	}
	out := []*controlplane.User{}
	var total int
	err := db.readTx(ctx, func(tx pgx.Tx) error {
		var err error
		total, err = page(ctx, tx, "users", where, a, "id ASC", f.Page, userCols, func(rows pgx.Rows) error {
			u, err := scanUser(rows)
			if err == nil {
				out = append(out, u)
			}
			return err
		})
		return err
	})
	if err != nil {
		return nil, 0, fmt.Errorf("list users: %w", err)
	}
	return out, total, nil
}

// UpdateUser applies the non-nil fields of upd and returns the user.
func (db *DB) UpdateUser(ctx context.Context, id int64, upd controlplane.UserUpdate) (*controlplane.User, error) {
	if err := storeutil.CheckUserUpdate(upd); err != nil {
		return nil, err
	}
	var a args
	sets := []string{"updated_at = " + a.add(db.now())}
	set := func(col string, v any) { sets = append(sets, col+" = "+a.add(v)) }
	if upd.DisplayName != nil {
		set("display_name", *upd.DisplayName)
	}
	if upd.Email != nil {
		set("email", *upd.Email)
	}
	if upd.Role != nil {
		set("role", *upd.Role)
	}
	if upd.Status != nil {
		set("status", *upd.Status)
	}
	if upd.Tenant != nil {
		set("tenant", *upd.Tenant)
	}
	if upd.PasswordHash != nil {
		set("password_hash", *upd.PasswordHash)
	}
	if upd.FailedLogins != nil {
		set("failed_logins", *upd.FailedLogins)
	}
	if upd.LockedUntil != nil {
		set("locked_until", storeutil.TruncPtr(*upd.LockedUntil))
	}
	if upd.Lockouts != nil {
		set("lockouts", *upd.Lockouts)
	}
	q := `UPDATE users SET ` + strings.Join(sets, ", ") + ` WHERE id = ` + a.add(id) + ` RETURNING ` + userCols
	u, err := scanUser(db.pool.QueryRow(ctx, q, a...))
	if err != nil {
		return nil, fmt.Errorf("update user %d: %w", id, err)
	}
	return u, nil
}

// DeleteUser removes the user with its refresh tokens and API keys; its
// tasks stay, with owner_id cleared and the owner name kept.
func (db *DB) DeleteUser(ctx context.Context, id int64) error {
	tag, err := db.pool.Exec(ctx, `DELETE FROM users WHERE id = $1`, id)
	if err != nil {
		return fmt.Errorf("delete user %d: %w", id, mapErr(err))
	}
	return affected(tag, fmt.Sprintf("user %d", id))
}

// CountUsers returns the number of users (bootstrap checks for zero).
func (db *DB) CountUsers(ctx context.Context) (int, error) {
	var n int
	if err := db.pool.QueryRow(ctx, `SELECT COUNT(*) FROM users`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count users: %w", mapErr(err))
	}
	return n, nil
}

// RecordLoginFailure counts a failed login in one transaction: the
// increment is done by SQL (failed_logins + 1) on the row it locks, so
// concurrent failures are all counted.
func (db *DB) RecordLoginFailure(ctx context.Context, id int64, maxFailures int, lockFor func(lockouts int) time.Duration) (*controlplane.User, error) {
	now := db.now()
	var u *controlplane.User
	err := db.tx(ctx, func(tx pgx.Tx) error {
		var failed, lockouts int
		if err := tx.QueryRow(ctx, `UPDATE users SET failed_logins = failed_logins + 1, updated_at = $1
			WHERE id = $2 RETURNING failed_logins, lockouts`, now, id).Scan(&failed, &lockouts); err != nil {
			return mapErr(err)
		}
		if failed >= maxFailures {
			until := storeutil.Trunc(now.Add(lockFor(lockouts)))
			if _, err := tx.Exec(ctx, `UPDATE users SET failed_logins = 0, lockouts = lockouts + 1,
				locked_until = $1 WHERE id = $2`, until, id); err != nil {
				return mapErr(err)
			}
		}
		var err error
		u, err = scanUser(tx.QueryRow(ctx, `SELECT `+userCols+` FROM users WHERE id = $1`, id))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("record failed login of user %d: %w", id, err)
	}
	return u, nil
}
