package controlplane

import "time"

// Role is a user's or API key's RBAC role. Permissions per role live in one
// table in controlplane/auth.
type Role string

const (
	RoleAdmin    Role = "admin"
	RoleOperator Role = "operator"
	RoleUser     Role = "user"
	RoleViewer   Role = "viewer"
	// RoleAgent is held only by node agents' API keys.
	RoleAgent Role = "agent"
)

// Valid reports whether r is a known role.
func (r Role) Valid() bool {
	switch r {
	case RoleAdmin, RoleOperator, RoleUser, RoleViewer, RoleAgent:
		return true
	}
	return false
}

// UserStatus: self-registered users wait in pending until an admin approves.
type UserStatus string

const (
	UserActive   UserStatus = "active"
	UserPending  UserStatus = "pending"
	UserDisabled UserStatus = "disabled"
)

// User is a console/API account. PasswordHash is never serialised to clients.
type User struct {
	ID           int64
	Username     string
	DisplayName  string
	Email        string
	Role         Role
	Status       UserStatus
	Tenant       string
	PasswordHash string
	// FailedLogins counts consecutive failures; LockedUntil is set when the
	// lockout policy trips and cleared on the next successful login.
	FailedLogins int
	LockedUntil  *time.Time
	// Lockouts counts successive lockouts since the last good login; each
	// lasts longer than the one before.
	Lockouts int
	// AuthSource is where the account signs in: "" for a local account
	// with a password, AuthSourceLDAP, or AuthSourceOIDCPrefix+provider.
	// An external account has no local password and is kept in sync with
	// its directory or provider on every login.
	AuthSource string
	// ExternalID is the account's stable id at its source (the LDAP
	// entry's DN, the OIDC subject); "" for a local account.
	ExternalID string
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// Auth sources of external accounts (User.AuthSource).
const (
	AuthSourceLDAP       = "ldap"
	AuthSourceOIDCPrefix = "oidc:"
)

// External reports whether u signs in through LDAP or OIDC, never with a
// local password.
func (u *User) External() bool { return u.AuthSource != "" }

// UserFilter narrows ListUsers.
type UserFilter struct {
	Role   Role
	Status UserStatus
	Query  string // substring of username, display name or email
	Page   Page
}

// UserUpdate carries the fields an update changes; nil means unchanged.
type UserUpdate struct {
	DisplayName  *string
	Email        *string
	Role         *Role
	Status       *UserStatus
	Tenant       *string
	PasswordHash *string
	FailedLogins *int
	LockedUntil  **time.Time
	Lockouts     *int
	ExternalID   *string
}

// RefreshToken is one link of a rotation chain. Only the SHA-256 hash of the
// token is stored. Family ties rotations together so that presenting an
// already-rotated token revokes the whole family (reuse detection).
type RefreshToken struct {
	ID         int64
	UserID     int64
	Family     string
	TokenHash  string
	ExpiresAt  time.Time
	CreatedAt  time.Time
	RotatedAt  *time.Time // set when exchanged for a successor
	RevokedAt  *time.Time // set on logout or reuse detection
	ReplacedBy int64
}

// APIKey is a long-lived credential for services and agents. The secret is
// shown once at creation; only its hash is stored. Prefix identifies the key
// in lists and logs.
type APIKey struct {
	ID         int64
	Name       string
	Prefix     string
	SecretHash string
	Role       Role
	OwnerID    int64 // user who created it
	NodeID     string
	// Tenant scopes the key to one tenant: it acts only there, with at
	// most its owner's role in that tenant ("" = not scoped).
	Tenant     string
	ExpiresAt  *time.Time
	LastUsedAt *time.Time
	RevokedAt  *time.Time
	CreatedAt  time.Time
}
