package storesql

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

const userCols = `id, username, display_name, email, role, status, tenant, password_hash,
	failed_logins, locked_until, created_at, updated_at, lockouts, auth_source, external_id`

func (q Queries) scanUser(row Row) (*controlplane.User, error) {
	var u controlplane.User
	d := q.db
	if err := row.Scan(&u.ID, &u.Username, &u.DisplayName, &u.Email, &u.Role, &u.Status, &u.Tenant,
		&u.PasswordHash, &u.FailedLogins, d.ScanNullTime(&u.LockedUntil), d.ScanTime(&u.CreatedAt),
		d.ScanTime(&u.UpdatedAt), &u.Lockouts, &u.AuthSource, &u.ExternalID); err != nil {
		return nil, err
	}
	return &u, nil
}

// CreateUser inserts u and sets its ID and timestamps; ErrConflict when the
// username is taken.
func (q Queries) CreateUser(ctx context.Context, u *controlplane.User) error {
	if err := storeutil.PrepareUser(u); err != nil {
		return err
	}
	now := q.db.Now()
	u.LockedUntil = storeutil.TruncPtr(u.LockedUntil)
	return q.db.Write(ctx, func(c Conn) error {
		err := c.QueryRow(ctx, `INSERT INTO users (username, display_name, email, role, status,
			tenant, password_hash, failed_logins, locked_until, created_at, updated_at, auth_source, external_id)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10, $11, $12) RETURNING id`,
			u.Username, u.DisplayName, u.Email, u.Role, u.Status, u.Tenant, u.PasswordHash,
			u.FailedLogins, q.db.NullTime(u.LockedUntil), q.db.Time(now), u.AuthSource, u.ExternalID).Scan(&u.ID)
		if err != nil {
			return fmt.Errorf("create user %q: %w", u.Username, err)
		}
		u.CreatedAt, u.UpdatedAt = now, now
		return nil
	})
}

// GetUser returns the user with id or ErrNotFound.
func (q Queries) GetUser(ctx context.Context, id int64) (*controlplane.User, error) {
	u, err := q.scanUser(q.db.Reader().QueryRow(ctx, `SELECT `+userCols+` FROM users WHERE id = $1`, id))
	if err != nil {
		return nil, fmt.Errorf("user %d: %w", id, err)
	}
	return u, nil
}

// GetUserByName returns the user with username or ErrNotFound.
func (q Queries) GetUserByName(ctx context.Context, username string) (*controlplane.User, error) {
	u, err := q.scanUser(q.db.Reader().QueryRow(ctx, `SELECT `+userCols+` FROM users WHERE username = $1`, username))
	if err != nil {
		return nil, fmt.Errorf("user %q: %w", username, err)
	}
	return u, nil
}

// ListUsers returns one page of users ordered by id, and the total matching f.
func (q Queries) ListUsers(ctx context.Context, f controlplane.UserFilter) ([]*controlplane.User, int, error) {
	var where []string
	a := q.args()
	if f.Role != "" {
		where = append(where, "role = "+a.Add(f.Role))
	}
	if f.Status != "" {
		where = append(where, "status = "+a.Add(f.Status))
	}
	if f.Query != "" {
		p, like := a.Add(storeutil.ContainsPattern(f.Query)), q.db.ILike()
		where = append(where, fmt.Sprintf(`(username %[2]s %[1]s ESCAPE '\' OR display_name %[2]s %[1]s ESCAPE '\'
			OR email %[2]s %[1]s ESCAPE '\')`, p, like))
	}
	out := []*controlplane.User{}
	var total int
	err := q.db.ReadTx(ctx, func(c Conn) error {
		var err error
		total, err = page(ctx, c, "users", where, a, "id ASC", f.Page, userCols, q.scanUser, &out)
		return err
	})
	if err != nil {
		return nil, 0, fmt.Errorf("list users: %w", err)
	}
	return out, total, nil
}

// UpdateUser applies the non-nil fields of upd and returns the user.
func (q Queries) UpdateUser(ctx context.Context, id int64, upd controlplane.UserUpdate) (*controlplane.User, error) {
	if err := storeutil.CheckUserUpdate(upd); err != nil {
		return nil, err
	}
	a := q.args()
	sets := []string{"updated_at = " + a.AddTime(q.db.Now())}
	set := func(col string, v any) { sets = append(sets, col+" = "+a.Add(v)) }
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
		set("locked_until", q.db.NullTime(storeutil.TruncPtr(*upd.LockedUntil)))
	}
	if upd.Lockouts != nil {
		set("lockouts", *upd.Lockouts)
	}
	if upd.ExternalID != nil {
		set("external_id", *upd.ExternalID)
	}
	query := `UPDATE users SET ` + strings.Join(sets, ", ") + ` WHERE id = ` + a.Add(id) + ` RETURNING ` + userCols
	var u *controlplane.User
	err := q.db.Write(ctx, func(c Conn) error {
		var err error
		u, err = q.scanUser(c.QueryRow(ctx, query, a.Vals...))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("update user %d: %w", id, err)
	}
	return u, nil
}

// DeleteUser removes the user with its refresh tokens and API keys; its
// tasks stay, with owner_id cleared and the owner name kept.
func (q Queries) DeleteUser(ctx context.Context, id int64) error {
	return q.db.Write(ctx, func(c Conn) error {
		n, err := c.Exec(ctx, `DELETE FROM users WHERE id = $1`, id)
		return affected(n, err, fmt.Sprintf("user %d", id))
	})
}

// CountUsers returns the number of users (bootstrap checks for zero).
func (q Queries) CountUsers(ctx context.Context) (int, error) {
	var n int
	if err := q.db.Reader().QueryRow(ctx, `SELECT COUNT(*) FROM users`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count users: %w", err)
	}
	return n, nil
}

// RecordLoginFailure counts a failed login in one write transaction: the
// increment is done by SQL (failed_logins + 1) on the row it locks, never by
// writing back a count read earlier, so concurrent failures are all counted.
func (q Queries) RecordLoginFailure(ctx context.Context, id int64, maxFailures int, lockFor func(lockouts int) time.Duration) (*controlplane.User, error) {
	now := q.db.Now()
	var u *controlplane.User
	err := q.db.Tx(ctx, func(c Conn) error {
		var failed, lockouts int
		if err := c.QueryRow(ctx, `UPDATE users SET failed_logins = failed_logins + 1, updated_at = $1
			WHERE id = $2 RETURNING failed_logins, lockouts`, q.db.Time(now), id).Scan(&failed, &lockouts); err != nil {
			return err
		}
		if failed >= maxFailures {
			until := storeutil.Trunc(now.Add(lockFor(lockouts)))
			if _, err := c.Exec(ctx, `UPDATE users SET failed_logins = 0, lockouts = lockouts + 1,
				locked_until = $1 WHERE id = $2`, q.db.Time(until), id); err != nil {
				return err
			}
		}
		var err error
		u, err = q.scanUser(c.QueryRow(ctx, `SELECT `+userCols+` FROM users WHERE id = $1`, id))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("record failed login of user %d: %w", id, err)
	}
	return u, nil
}
