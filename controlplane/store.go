package controlplane

import (
	"context"
	"time"
)

// Store is the control plane's persistence. Implementations: controlplane/sqlite
// and controlplane/postgres; both pass controlplane/storetest.
//
// Every method returns ErrNotFound for a missing row and ErrConflict for a
// unique-key clash or a failed state guard; other errors are wrapped driver
// errors (ErrUnavailable when the database cannot be reached).
type Store interface {
	// Ping checks the database is reachable (used by /health).
	Ping(ctx context.Context) error
	Close() error

	// Users.
	CreateUser(ctx context.Context, u *User) error // sets ID, CreatedAt, UpdatedAt
	GetUser(ctx context.Context, id int64) (*User, error)
	GetUserByName(ctx context.Context, username string) (*User, error)
	ListUsers(ctx context.Context, f UserFilter) ([]*User, int, error) // page, total
	UpdateUser(ctx context.Context, id int64, upd UserUpdate) (*User, error)
	DeleteUser(ctx context.Context, id int64) error
	// RecordLoginFailure counts one failed login of user id atomically, so
	// that concurrent failures are all counted. When the count reaches
	// maxFailures the account is locked until now + lockFor(Lockouts)
	// (Lockouts as it was before this lockout), the count restarts at 0 and
	// Lockouts grows by one. It returns the user as updated; ErrNotFound.
	RecordLoginFailure(ctx context.Context, id int64, maxFailures int, lockFor func(lockouts int) time.Duration) (*User, error)
	CountUsers(ctx context.Context) (int, error)

	// Refresh tokens (rotation chains).
	CreateRefreshToken(ctx context.Context, t *RefreshToken) error
	GetRefreshTokenByHash(ctx context.Context, hash string) (*RefreshToken, error)
	// RotateRefreshToken marks old rotated and inserts next in one
	// transaction; ErrConflict when old was already rotated or revoked.
	RotateRefreshToken(ctx context.Context, oldID int64, next *RefreshToken) error
	RevokeRefreshFamily(ctx context.Context, family string, at time.Time) error
	RevokeUserRefreshTokens(ctx context.Context, userID int64, at time.Time) error

	// API keys.
	CreateAPIKey(ctx context.Context, k *APIKey) error
	GetAPIKeyByPrefix(ctx context.Context, prefix string) (*APIKey, error)
	ListAPIKeys(ctx context.Context, ownerID int64, page Page) ([]*APIKey, int, error) // ownerID 0 = all
	RevokeAPIKey(ctx context.Context, id int64, at time.Time) error
	TouchAPIKey(ctx context.Context, id int64, at time.Time) error

	// Tasks. CreateTask stores the task in TaskSubmitted with its first event;
	// ErrConflict when t.SubmitKey names a key its owner already holds.
	CreateTask(ctx context.Context, t *Task) error
	// TaskBySubmitKey returns the task ownerID submitted with key and the
	// request hash stored with it; ErrNotFound when there is none (or
	// retention has cleared the key).
	TaskBySubmitKey(ctx context.Context, ownerID int64, key string) (*Task, string, error)
	GetTask(ctx context.Context, id int64) (*Task, error)
	ListTasks(ctx context.Context, f TaskFilter) ([]*Task, int, error)
	// TransitionTask applies tr atomically (row update + event insert) and
	// returns the updated task. ErrConflict if the task is not in tr.From.
	TransitionTask(ctx context.Context, tr Transition) (*Task, error)
	ListTaskEvents(ctx context.Context, taskID int64) ([]*TaskEvent, error)

	// Audit log.
	AppendAudit(ctx context.Context, e *AuditEntry) error
	ListAudit(ctx context.Context, f AuditFilter) ([]*AuditEntry, int, error)

	// Settings: small runtime key/value configuration (e.g. self-registration).
	GetSetting(ctx context.Context, key string) (string, error)
	PutSetting(ctx context.Context, key, value string) error
	// DeleteSetting removes key; removing a missing key is not an error.
	DeleteSetting(ctx context.Context, key string) error
}

// AuthChange tells every server sharing a store that cached credentials
// must be forgotten: one API key (KeyID), every key of one user (OwnerID),
// or everything (All: the feed may have missed changes).
type AuthChange struct {
	KeyID   int64
	OwnerID int64
	All     bool
}

// AuthChangeFeed carries AuthChanges between the servers of one store
// (PostgreSQL: LISTEN/NOTIFY). A store shared by one server only (SQLite)
// has none.
type AuthChangeFeed interface {
	// PublishAuthChange sends c to every subscriber on every server,
	// this one included.
	PublishAuthChange(ctx context.Context, c AuthChange) error
	// SubscribeAuthChanges calls fn for each change until cancel.
	SubscribeAuthChanges(fn func(AuthChange)) (cancel func())
	// AuthChangesLive reports whether changes are being received now;
	// while not, caches must not trust what they hold for long.
	AuthChangesLive() bool
}
