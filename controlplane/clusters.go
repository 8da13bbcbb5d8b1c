package controlplane

import (
	"context"
	"time"
)

// Multi-cluster: a hub server registers member clusters (other HeteroFlow
// control planes), keeps what its leader last read from each, and follows
// the tasks it forwarded to them.

// ClusterStatus is what the hub's last poll of a member found.
type ClusterStatus string

const (
	ClusterUnknown     ClusterStatus = "unknown"     // registered, not polled yet
	ClusterReachable   ClusterStatus = "reachable"   // the last poll was answered
	ClusterUnreachable ClusterStatus = "unreachable" // the last poll failed; LastError says why
)

// MemberCluster is one registered member. APIKeySealed is the member's API
// key sealed by the hub (never returned by the API); CAPEM or Fingerprint
// pin the member's TLS certificate.
type MemberCluster struct {
	ID           int64
	Name         string
	URL          string
	APIKeySealed string
	CAPEM        string
	Fingerprint  string // SHA-256 of the member's certificate, hex
	Version      string
	Status       ClusterStatus
	LastError    string
	// Summary is the JSON view the hub's leader last read from the member
	// (health, nodes, devices, capacity, queue, alerts, usage).
	Summary   []byte
	PolledAt  *time.Time
	CreatedBy string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// ForwardedState is a forwarded task's state on the hub: the member's task
// state, "forwarding" while the submission is under way, or "unknown"
// while its member cannot be reached.
type ForwardedState string

const (
	ForwardedForwarding ForwardedState = "forwarding"
	ForwardedUnknown    ForwardedState = "unknown"
)

// Terminal reports whether the member's task has ended.
func (s ForwardedState) Terminal() bool { return TaskState(s).Terminal() }

// ForwardedTask is a task the hub placed on a member.
type ForwardedTask struct {
	ID           int64
	Cluster      string // the member's name (kept when the member is removed)
	MemberTaskID int64  // 0 until the member accepted it
	Name         string
	OwnerID      int64
	Owner        string
	Tenant       string
	State        ForwardedState
	Reason       string
	// Placement is the JSON record of the cluster-level scores that chose
	// the member.
	Placement []byte
	// SubmitKey, set at creation, makes the submission idempotent (as a
	// task's); written with the record, not read back (see
	// ForwardedTaskBySubmitKey).
	SubmitKey  *SubmitKey
	CreatedAt  time.Time
	UpdatedAt  time.Time
	FinishedAt *time.Time
}

// ForwardedFilter narrows ListForwardedTasks.
type ForwardedFilter struct {
	Cluster string
	OwnerID int64
	Tenant  string // only this tenant's ("" any)
	Active  bool   // not terminal
	Page    Page
}

// ClusterStore keeps the hub's members and forwarded tasks. Errors:
// ErrNotFound for an unknown id or name, ErrConflict for a name taken,
// ErrInvalid for bad input.
type ClusterStore interface {
	CreateCluster(ctx context.Context, c *MemberCluster) error
	GetCluster(ctx context.Context, id int64) (*MemberCluster, error)
	ListClusters(ctx context.Context) ([]*MemberCluster, error)
	DeleteCluster(ctx context.Context, id int64) error
	// RecordClusterPoll stores a poll's outcome; summary nil keeps the
	// last summary (a failed poll keeps what was last seen).
	RecordClusterPoll(ctx context.Context, id int64, status ClusterStatus, version, lastError string, summary []byte, at time.Time) error

	// CreateForwardedTask stores t; a t.SubmitKey its owner already holds
	// is ErrConflict, and nothing is stored.
	CreateForwardedTask(ctx context.Context, t *ForwardedTask) error
	GetForwardedTask(ctx context.Context, id int64) (*ForwardedTask, error)
	// ForwardedTaskBySubmitKey returns the forwarded task ownerID submitted
	// with the idempotency key, and the request hash stored with it;
	// ErrNotFound when the owner holds no such key.
	ForwardedTaskBySubmitKey(ctx context.Context, ownerID int64, key string) (*ForwardedTask, string, error)
	ListForwardedTasks(ctx context.Context, f ForwardedFilter) ([]*ForwardedTask, int, error)
	// UpdateForwardedTask sets the member's task id (when not 0), state,
	// reason and finish time.
	UpdateForwardedTask(ctx context.Context, id, memberTaskID int64, state ForwardedState, reason string, finishedAt *time.Time) error
	// MarkClusterTasksUnknown sets every unfinished task of cluster to
	// unknown (its member went away) and returns how many.
	MarkClusterTasksUnknown(ctx context.Context, cluster, reason string) (int, error)
	DeleteForwardedTask(ctx context.Context, id int64) error
}

// Bounds of a member's registration.
const (
	MaxClusterNameLen = 63
	MaxClusterURLLen  = 2048
	MaxClusterCALen   = 64 << 10
)

// Validate checks what the store keeps of a member.
func (c *MemberCluster) Validate() error {
	if !validClusterName(c.Name) {
		return InvalidCode("cluster_name_invalid", []string{"name", c.Name},
			"cluster name %q must be 1-%d lowercase letters, digits or '-', starting with a letter", c.Name, MaxClusterNameLen)
	}
	if c.URL == "" || len(c.URL) > MaxClusterURLLen {
		return Invalidf("cluster url must be 1-%d characters", MaxClusterURLLen)
	}
	if c.APIKeySealed == "" {
		return Invalidf("cluster api key is required")
	}
	if len(c.CAPEM) > MaxClusterCALen {
		return Invalidf("cluster ca_pem must be at most %d bytes", MaxClusterCALen)
	}
	return nil
}

func validClusterName(n string) bool {
	if n == "" || len(n) > MaxClusterNameLen || n[0] < 'a' || n[0] > 'z' {
		return false
	}
	for _, r := range n {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' {
			return false
		}
	}
	return true
}
