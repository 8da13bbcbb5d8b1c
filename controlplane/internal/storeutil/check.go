package storeutil

import (
	"fmt"
	"strings"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
)

// Now returns the current time at the precision both databases keep
// (PostgreSQL timestamptz stores microseconds), in UTC, so that a value
// written and read back compares equal on either store.
func Now() time.Time { return Trunc(time.Now()) }

// Trunc brings t to microsecond precision in UTC.
func Trunc(t time.Time) time.Time { return t.Truncate(time.Microsecond).UTC() }

// TruncPtr is Trunc for optional times.
func TruncPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := Trunc(*t)
	return &v
}

// PrepareUser checks and defaults a user before insert.
func PrepareUser(u *controlplane.User) error {
	if strings.TrimSpace(u.Username) == "" {
		return controlplane.Invalidf("username is required")
	}
	if !u.Role.Valid() {
		return controlplane.Invalidf("unknown role %q", u.Role)
	}
	if err := userText(&u.Username, &u.DisplayName, &u.Email, &u.Tenant); err != nil {
		return err
	}
	if u.Status == "" {
		u.Status = controlplane.UserActive
	}
	switch u.Status {
	case controlplane.UserActive, controlplane.UserPending, controlplane.UserDisabled:
	default:
		return controlplane.Invalidf("unknown user status %q", u.Status)
	}
	return nil
}

// userText applies the text rules both stores share (valid UTF-8, no NUL,
// tenant within controlplane.MaxTenantLen) to the non-nil fields.
func userText(username, display, email, tenant *string) error {
	for _, f := range []struct {
		name string
		v    *string
	}{{"username", username}, {"display_name", display}, {"email", email}, {"tenant", tenant}} {
		if f.v == nil {
			continue
		}
		if err := controlplane.CleanText(f.name, *f.v); err != nil {
			return err
		}
	}
	if tenant != nil && len(*tenant) > controlplane.MaxTenantLen {
		return controlplane.Invalidf("tenant is longer than %d bytes", controlplane.MaxTenantLen)
	}
	return nil
}

// CheckUserUpdate validates the enumerated fields of an update.
func CheckUserUpdate(upd controlplane.UserUpdate) error {
	if err := userText(nil, upd.DisplayName, upd.Email, upd.Tenant); err != nil {
		return err
	}
	if upd.Role != nil && !upd.Role.Valid() {
		return controlplane.Invalidf("unknown role %q", *upd.Role)
	}
	if upd.Status != nil {
		switch *upd.Status {
		case controlplane.UserActive, controlplane.UserPending, controlplane.UserDisabled:
		default:
			return controlplane.Invalidf("unknown user status %q", *upd.Status)
		}
	}
	return nil
}

// CheckTransition validates tr before it reaches the database: the move must
// be in the transition table, and Retry only makes sense for a move to queued.
func CheckTransition(tr controlplane.Transition) error {
	if !tr.From.Valid() || !tr.To.Valid() || (tr.Via != "" && !tr.Via.Valid()) {
		return controlplane.Invalidf("unknown task state in %q → %q → %q", tr.From, tr.Via, tr.To)
	}
	if err := tr.Check(); err != nil {
		return err
	}
	if tr.Retry && tr.To != controlplane.TaskQueued {
		return controlplane.Invalidf("retry must move the task to queued, not %s", tr.To)
	}
	return nil
}

// GuardError explains why a guarded transition updated no row, from the row's
// current state (found=false: the task does not exist).
func GuardError(tr controlplane.Transition, found bool, state controlplane.TaskState, attempt, maxRetries int) error {
	if !found {
		return fmt.Errorf("task %d: %w", tr.TaskID, controlplane.ErrNotFound)
	}
	if state != tr.From {
		return fmt.Errorf("%w: task %d is %s, not %s", controlplane.ErrConflict, tr.TaskID, state, tr.From)
	}
	if tr.Retry && attempt >= maxRetries {
		return fmt.Errorf("%w: task %d has used %d of %d retries", controlplane.ErrConflict, tr.TaskID, attempt, maxRetries)
	}
	// The row changed between the update and this read; the caller raced.
	return fmt.Errorf("%w: task %d changed concurrently", controlplane.ErrConflict, tr.TaskID)
}

// ContainsPattern turns a substring into a LIKE pattern with '\' as escape
// character, so that %, _ and \ in user input match literally.
func ContainsPattern(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(s) + "%"
}

// FirstEventActor is the actor recorded on a task's submitted event.
func FirstEventActor(owner string) string {
	if owner == "" {
		return "system"
	}
	return owner
}

// CheckRefreshToken validates a token before insert.
func CheckRefreshToken(t *controlplane.RefreshToken) error {
	switch {
	case t.UserID == 0:
		return controlplane.Invalidf("refresh token needs a user")
	case t.TokenHash == "":
		return controlplane.Invalidf("refresh token needs a hash")
	case t.Family == "":
		return controlplane.Invalidf("refresh token needs a family")
	case t.ExpiresAt.IsZero():
		return controlplane.Invalidf("refresh token needs an expiry")
	}
	return nil
}

// PrepareRotation ties next to the rotated token's user and family.
func PrepareRotation(next *controlplane.RefreshToken, userID int64, family string) error {
	if next.UserID != 0 && next.UserID != userID {
		return controlplane.Invalidf("rotated refresh token belongs to another user")
	}
	if next.Family != "" && next.Family != family {
		return controlplane.Invalidf("rotated refresh token must stay in its family")
	}
	next.UserID, next.Family = userID, family
	return CheckRefreshToken(next)
}

// CheckAPIKey validates a key before insert.
func CheckAPIKey(k *controlplane.APIKey) error {
	switch {
	case strings.TrimSpace(k.Name) == "":
		return controlplane.Invalidf("api key name is required")
	case k.Prefix == "":
		return controlplane.Invalidf("api key prefix is required")
	case k.SecretHash == "":
		return controlplane.Invalidf("api key secret hash is required")
	case !k.Role.Valid():
		return controlplane.Invalidf("unknown role %q", k.Role)
	}
	return nil
}

// PrepareAudit validates e and fills its time.
func PrepareAudit(e *controlplane.AuditEntry, now time.Time) error {
	if e.Action == "" {
		return controlplane.Invalidf("audit entry needs an action")
	}
	if e.Module == "" {
		return controlplane.Invalidf("audit entry needs a module")
	}
	if e.Level == "" {
		e.Level = controlplane.LevelInfo
	}
	if e.At.IsZero() {
		e.At = now
	}
	e.At = Trunc(e.At)
	return nil
}

// CheckSettingKey rejects an empty key.
func CheckSettingKey(key string) error {
	if strings.TrimSpace(key) == "" {
		return controlplane.Invalidf("setting key is required")
	}
	return nil
}
