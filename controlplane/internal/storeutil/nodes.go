package storeutil

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// Node, assignment, scheduling and lease rules both stores apply before or
// after their SQL, so that SQLite and PostgreSQL answer alike.

// JSONOr encodes v, storing empty instead of JSON null (a nil map or slice)
// so that JSON operators in SQL always see a container.
func JSONOr(v any, empty string) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	if string(b) == "null" {
		return empty, nil
	}
	return string(b), nil
}

// NodeJSON encodes a node's labels ("{}" when none) and inventory ("[]").
func NodeJSON(n *controlplane.Node) (labels, inv string, err error) {
	if labels, err = JSONOr(n.Labels, "{}"); err != nil {
		return "", "", fmt.Errorf("node %s labels: %w", n.ID, err)
	}
	if inv, err = JSONOr(n.Inventory, "[]"); err != nil {
		return "", "", fmt.Errorf("node %s inventory: %w", n.ID, err)
	}
	return labels, inv, nil
}

// DecodeNode fills n's JSON fields from stored column values.
func DecodeNode(n *controlplane.Node, labels, inv, running []byte) error {
	if err := json.Unmarshal(labels, &n.Labels); err != nil {
		return fmt.Errorf("node %s labels: %w", n.ID, err)
	}
	if err := json.Unmarshal(inv, &n.Inventory); err != nil {
		return fmt.Errorf("node %s inventory: %w", n.ID, err)
	}
	n.Running = json.RawMessage(running)
	return nil
}

// HeartbeatInventory encodes a heartbeat's inventory; keep is true when the
// heartbeat carries none (nil) and the stored one must stay.
func HeartbeatInventory(inv []inventory.Snapshot) (s string, keep bool, err error) {
	if inv == nil {
		return "", true, nil
	}
	s, err = JSONOr(inv, "[]")
	return s, false, err
}

// RunningJSON is the stored form of an agent's running list: "[]" when
// absent or null.
func RunningJSON(raw json.RawMessage) string {
	if s := string(raw); s != "" && s != "null" {
		return s
	}
	return "[]"
}

// PayloadJSON is the stored form of an assignment payload: "{}" when empty.
func PayloadJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "{}"
	}
	return string(raw)
}

// OptionalJSON is nil (SQL NULL, keep the stored value) for an empty
// document, else its text.
func OptionalJSON(raw json.RawMessage) *string {
	if len(raw) == 0 {
		return nil
	}
	s := string(raw)
	return &s
}

// EndResult is the result a run assignment gets when the agent reports the
// task's end: the end state as a JSON string. A run with a result is one
// the agent has finished, so RunsToStop leaves it alone.
func EndResult(to controlplane.TaskState) string { return `"` + string(to) + `"` }

// CheckBootstrapUse says whether a bootstrap token found by its hash may
// enroll a node at now: ErrConflict when it was used or has expired.
func CheckBootstrapUse(used bool, expires, now time.Time) error {
	switch {
	case used:
		return fmt.Errorf("%w: bootstrap token was already used", controlplane.ErrConflict)
	case !now.Before(expires):
		return fmt.Errorf("%w: bootstrap token expired", controlplane.ErrConflict)
	}
	return nil
}

// PrepareEnroll defaults a node before insert: online, created and heard
// from now.
func PrepareEnroll(n *controlplane.Node, now time.Time) {
	if n.State == "" {
		n.State = controlplane.NodeOnline
	}
	n.CreatedAt, n.UpdatedAt, n.LastHeartbeat = now, now, &now
}

// ApplyStatusTransition says whether a status update moving a task to a
// state is applied: only the node the task is placed on may move it (a late
// report of a run the scheduler stopped must not end the task's next
// placement) and only along the transition table.
func ApplyStatusTransition(st controlplane.NodeStatus, cur controlplane.TaskState, onNode string) bool {
	return onNode == st.NodeID && controlplane.CanTransition(cur, st.To)
}

// StatusTransition is the transition a node's status update applies.
func StatusTransition(st controlplane.NodeStatus, cur controlplane.TaskState) controlplane.Transition {
	return controlplane.Transition{TaskID: st.TaskID, From: cur, To: st.To, Reason: st.Reason,
		Actor: "node:" + st.NodeID, ExitCode: st.ExitCode}
}

// LogLimit clamps a log read's chunk count to (0, MaxPageLimit].
func LogLimit(limit int) int {
	if limit <= 0 || limit > controlplane.MaxPageLimit {
		return controlplane.MaxPageLimit
	}
	return limit
}

// ListLimit is a scheduler list's row cap: MaxPageLimit when not positive.
func ListLimit(limit int) int {
	if limit <= 0 {
		return controlplane.MaxPageLimit
	}
	return limit
}

// CheckRequeue validates a RequeueTask transition: a placed task moves to
// queued without spending a retry.
func CheckRequeue(tr controlplane.Transition) error {
	if tr.To != controlplane.TaskQueued || tr.Retry {
		return controlplane.Invalidf("requeue moves a placed task to queued without a retry")
	}
	return nil
}

// CheckLease validates AcquireLease's input.
func CheckLease(name, holder string, ttl time.Duration) error {
	if name == "" || holder == "" || ttl <= 0 {
		return controlplane.Invalidf("lease needs a name, a holder and a positive ttl")
	}
	return nil
}

// InventoryHash names a stored inventory's text: readers that hold the
// decoded inventory for this hash need not read the text again.
func InventoryHash(stored string) string {
	sum := sha256.Sum256([]byte(stored))
	return hex.EncodeToString(sum[:16])
}
