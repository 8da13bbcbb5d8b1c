package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

const userCols = `id, username, display_name, email, role, status, tenant, password_hash,
	failed_logins, locked_until, created_at, updated_at, lockouts`

func scanUser(row interface{ Scan(...any) error }) (*controlplane.User, error) {
	var u controlplane.User
	var locked sql.NullInt64
	var created, updated int64
	if err := row.Scan(&u.ID, &u.Username, &u.DisplayName, &u.Email, &u.Role, &u.Status, &u.Tenant,
		&u.PasswordHash, &u.FailedLogins, &locked, &created, &updated, &u.Lockouts); err != nil {
		return nil, mapErr(err)
	}
	u.LockedUntil = fromNullTS(locked)
	u.CreatedAt, u.UpdatedAt = fromTS(created), fromTS(updated)
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
	return db.write(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `INSERT INTO users (username, display_name, email, role, status,
			tenant, password_hash, failed_logins, locked_until, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			u.Username, u.DisplayName, u.Email, u.Role, u.Status, u.Tenant, u.PasswordHash,
			u.FailedLogins, tsPtr(u.LockedUntil), ts(now), ts(now)).Scan(&u.ID)
		if err != nil {
			return fmt.Errorf("create user %q: %w", u.Username, mapErr(err))
		}
		u.CreatedAt, u.UpdatedAt = now, now
		return nil
	})
}

// GetUser returns the user with id or ErrNotFound.
func (db *DB) GetUser(ctx context.Context, id int64) (*controlplane.User, error) {
	u, err := scanUser(db.r.QueryRowContext(ctx, `SELECT `+userCols+` FROM users WHERE id = ?`, id))
	if err != nil {
		return nil, fmt.Errorf("user %d: %w", id, err)
	}
	return u, nil
}

// GetUserByName returns the user with username or ErrNotFound.
func (db *DB) GetUserByName(ctx context.Context, username string) (*controlplane.User, error) {
	u, err := scanUser(db.r.QueryRowContext(ctx, `SELECT `+userCols+` FROM users WHERE username = ?`, username))
	if err != nil {
		return nil, fmt.Errorf("user %q: %w", username, err)
	}
	return u, nil
}

// ListUsers returns one page of users ordered by id, and the total matching f.
func (db *DB) ListUsers(ctx context.Context, f controlplane.UserFilter) ([]*controlplane.User, int, error) {
	var where []string
	var args []any
	if f.Role != "" {
		where, args = append(where, "role = ?"), append(args, f.Role)
	}
	if f.Status != "" {
		where, args = append(where, "status = ?"), append(args, f.Status)
	}
	if f.Query != "" {
		p := storeutil.ContainsPattern(f.Query)
		where = append(where, `(username LIKE ? ESCAPE '\' OR display_name LIKE ? ESCAPE '\' OR email LIKE ? ESCAPE '\')`)
		args = append(args, p, p, p)
	}
	out := []*controlplane.User{}
	var total int
	err := db.read(ctx, func(tx *sql.Tx) error {
		var err error
		total, err = page(ctx, tx, "users", where, args, "id ASC", f.Page, userCols, func(rows *sql.Rows) error {
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
	sets := []string{"updated_at = ?"}
	args := []any{ts(db.now())}
	add := func(col string, v any) { sets, args = append(sets, col+" = ?"), append(args, v) }
	if upd.DisplayName != nil {
		add("display_name", *upd.DisplayName)
	}
	if upd.Email != nil {
		add("email", *upd.Email)
	}
	if upd.Role != nil {
		add("role", *upd.Role)
	}
	if upd.Status != nil {
		add("status", *upd.Status)
	}
	if upd.Tenant != nil {
		add("tenant", *upd.Tenant)
	}
	if upd.PasswordHash != nil {
		add("password_hash", *upd.PasswordHash)
	}
	if upd.FailedLogins != nil {
		add("failed_logins", *upd.FailedLogins)
	}
	if upd.LockedUntil != nil {
		add("locked_until", tsPtr(*upd.LockedUntil))
	}
	if upd.Lockouts != nil {
		add("lockouts", *upd.Lockouts)
	}
	args = append(args, id)
	var u *controlplane.User
	err := db.write(ctx, func(tx *sql.Tx) error {
		var err error
		u, err = scanUser(tx.QueryRowContext(ctx, `UPDATE users SET `+strings.Join(sets, ", ")+
			` WHERE id = ? RETURNING `+userCols, args...))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("update user %d: %w", id, err)
	}
	return u, nil
}

// DeleteUser removes the user with its refresh tokens and API keys; its
// tasks stay, with owner_id cleared and the owner name kept.
func (db *DB) DeleteUser(ctx context.Context, id int64) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM users WHERE id = ?`, id)
		if err != nil {
			return fmt.Errorf("delete user %d: %w", id, mapErr(err))
		}
		return affected(res, fmt.Sprintf("user %d", id))
	})
}

// CountUsers returns the number of users (bootstrap checks for zero).
func (db *DB) CountUsers(ctx context.Context) (int, error) {
	var n int
	if err := db.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM users`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count users: %w", mapErr(err))
	}
	return n, nil
}

// RecordLoginFailure counts a failed login in one write transaction: the
// increment is done by SQL (failed_logins + 1), never by writing back a
// count read earlier, so concurrent failures are all counted.
func (db *DB) RecordLoginFailure(ctx context.Context, id int64, maxFailures int, lockFor func(lockouts int) time.Duration) (*controlplane.User, error) {
	now := db.now()
	var u *controlplane.User
	err := db.write(ctx, func(tx *sql.Tx) error {
		var failed, lockouts int
		if err := tx.QueryRowContext(ctx, `UPDATE users SET failed_logins = failed_logins + 1, updated_at = ?
			WHERE id = ? RETURNING failed_logins, lockouts`, ts(now), id).Scan(&failed, &lockouts); err != nil {
			return mapErr(err)
		}
		if failed >= maxFailures {
			until := storeutil.Trunc(now.Add(lockFor(lockouts)))
			if _, err := tx.ExecContext(ctx, `UPDATE users SET failed_logins = 0, lockouts = lockouts + 1,
				locked_until = ? WHERE id = ?`, ts(until), id); err != nil {
				return mapErr(err)
			}
		}
		var err error
		u, err = scanUser(tx.QueryRowContext(ctx, `SELECT `+userCols+` FROM users WHERE id = ?`, id))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("record failed login of user %d: %w", id, err)
	}
	return u, nil
}
