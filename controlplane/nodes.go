package controlplane

import (
	"context"
	"encoding/json"
	"time"

	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// NodeState is whether a node's agent is heard from.
type NodeState string

const (
	NodeOnline  NodeState = "online"
	NodeOffline NodeState = "offline"
)

// Node is an enrolled machine. Cordoned nodes get no new tasks; draining
// nodes get none and the scheduler moves their work away.
type Node struct {
	ID             string
	Hostname       string
	OS             string
	Arch           string
	Version        string
	Labels         map[string]string
	State          NodeState
	Cordoned       bool
	Draining       bool
	Health         string
	CPUCount       int
	MemoryTotalMiB int64
	MemoryFreeMiB  int64
	Inventory      []inventory.Snapshot
	Running        json.RawMessage // the agent's last list of running tasks
	APIKeyPrefix   string
	LastHeartbeat  *time.Time
	// LastStatusSeq is the highest agent outbox sequence applied: status
	// updates at or below it are duplicates and ignored.
	LastStatusSeq uint64
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// NodeFilter narrows ListNodes.
type NodeFilter struct {
	State  NodeState
	Vendor string // nodes with at least one device of this vendor
	Query  string // substring of id or hostname
	Page   Page
}

// NodeHeartbeat is what RecordHeartbeat stores; a nil Inventory keeps the
// stored one.
type NodeHeartbeat struct {
	At             time.Time
	Health         string
	CPUCount       int
	MemoryTotalMiB int64
	MemoryFreeMiB  int64
	Inventory      []inventory.Snapshot
	Running        json.RawMessage
}

// BootstrapToken is a one-time enrollment secret an admin hands to a new
// node. Only its hash is stored; UsedAt/NodeID are set when consumed.
type BootstrapToken struct {
	ID          int64
	Prefix      string // first characters, for lists
	TokenHash   string
	Description string
	CreatedBy   int64
	CreatedAt   time.Time
	ExpiresAt   time.Time
	UsedAt      *time.Time
	NodeID      string
}

// Assignment kinds.
const (
	AssignRun    = "run"
	AssignCancel = "cancel"
	AssignManage = "manage"
)

// Assignment is an item queued for one node's agent (a task to run, a task
// to cancel, a management command). It stays open until DoneAt is set, so
// an agent that reconnects receives it again; the agent dedupes by ID.
type Assignment struct {
	ID        int64
	NodeID    string
	Kind      string
	TaskID    int64
	Attempt   int
	Payload   json.RawMessage // agent/protocol JSON of the task spec or management command
	Result    json.RawMessage // management result
	CreatedAt time.Time
	DoneAt    *time.Time
}

// TaskLogChunk is a piece of a task's stdout/stderr shipped by the agent;
// (TaskID, Attempt, Stream, Offset) is unique, so a resent chunk is a no-op.
type TaskLogChunk struct {
	TaskID  int64
	Attempt int
	Stream  string
	Offset  int64
	Data    []byte
}

// NodeStatus is one agent outbox entry as the store applies it.
type NodeStatus struct {
	NodeID string
	Seq    uint64
	TaskID int64
	// To is the task state the update moves to ("" for none, e.g. a
	// management result). The store applies it only when the transition
	// table allows it from the task's current state.
	To       TaskState
	Reason   string
	ExitCode *int
	// AssignmentID, when not 0, is closed with Result.
	AssignmentID int64
	Result       json.RawMessage
}

// NodeStore is the persistence of nodes, enrollment and assignments,
// implemented by controlplane/sqlite and controlplane/postgres (both pass
// storetest.RunExtended). Errors follow Store's contract.
type NodeStore interface {
	CreateBootstrapToken(ctx context.Context, t *BootstrapToken) error
	ListBootstrapTokens(ctx context.Context, p Page) ([]*BootstrapToken, int, error)
	DeleteBootstrapToken(ctx context.Context, id int64) error
	GetBootstrapTokenByHash(ctx context.Context, hash string) (*BootstrapToken, error)
	// EnrollNode consumes the token and inserts n in one transaction:
	// ErrNotFound for an unknown token, ErrConflict when it was used,
	// expired, or the node id is taken.
	EnrollNode(ctx context.Context, tokenHash string, n *Node) error

	GetNode(ctx context.Context, id string) (*Node, error)
	ListNodes(ctx context.Context, f NodeFilter) ([]*Node, int, error)
	RecordHeartbeat(ctx context.Context, id string, hb NodeHeartbeat) (*Node, error)
	// MarkNodesOffline sets online nodes silent since before cutoff
	// offline and returns their ids.
	MarkNodesOffline(ctx context.Context, cutoff time.Time) ([]string, error)
	SetNodeScheduling(ctx context.Context, id string, cordoned, draining bool) (*Node, error)

	// AssignTask inserts a run assignment and applies tr (queued →
	// scheduled, NodeID set) in one transaction.
	AssignTask(ctx context.Context, a *Assignment, tr Transition) (*Task, error)
	CreateAssignment(ctx context.Context, a *Assignment) error
	GetAssignment(ctx context.Context, id int64) (*Assignment, error)
	// OpenAssignments lists a node's assignments not yet done, oldest first.
	OpenAssignments(ctx context.Context, nodeID string) ([]*Assignment, error)
	// CloseAssignment marks an assignment done with an optional result.
	CloseAssignment(ctx context.Context, id int64, result json.RawMessage) error
	// RunsToStop lists run assignments created after since whose task the
	// ledger no longer wants running on that node (cancelled, timed out,
	// failed, requeued or retried) while the agent has not reported an end,
	// and that have no cancel assignment yet.
	RunsToStop(ctx context.Context, since time.Time) ([]*Assignment, error)

	// ApplyNodeStatus applies one outbox entry exactly once: false (and no
	// change) when Seq is not above the node's LastStatusSeq.
	ApplyNodeStatus(ctx context.Context, st NodeStatus) (bool, error)

	AppendTaskLogs(ctx context.Context, chunks []*TaskLogChunk) error
	// ReadTaskLogs returns chunks of a stream at or after offset, in order.
	ReadTaskLogs(ctx context.Context, taskID int64, attempt int, stream string, offset int64, limit int) ([]*TaskLogChunk, error)
}
