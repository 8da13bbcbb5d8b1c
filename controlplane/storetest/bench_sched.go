package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
)

// BenchmarkBindTasks measures BindTasks with one binding per call (one
// queued → scheduled transition, devices ledger rows and a run assignment
// in one transaction), the scheduler's bind of one placement.
func BenchmarkBindTasks(b *testing.B, s FullStore, devices int) {
	node := benchNode(b, s)
	tasks := make([]*controlplane.Task, b.N)
	for i := range tasks {
		t := &controlplane.Task{Spec: MinimalSpec(fmt.Sprintf("bind-%d", i))}
		if err := s.CreateTask(b.Context(), t); err != nil {
			b.Fatal(err)
		}
		q, err := s.TransitionTask(b.Context(), controlplane.Transition{TaskID: t.ID, From: controlplane.TaskSubmitted, To: controlplane.TaskQueued})
		if err != nil {
			b.Fatal(err)
		}
		tasks[i] = q
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.BindTasks(b.Context(), []controlplane.Binding{binding(tasks[i], node, devices)}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkApplyNodeStatus measures ApplyNodeStatus of management results
// (sequence guard + assignment close), the agent outbox's steady traffic.
func BenchmarkApplyNodeStatus(b *testing.B, s FullStore) {
	node := benchNode(b, s)
	ids := make([]int64, b.N)
	for i := range ids {
		a := &controlplane.Assignment{NodeID: node, Kind: controlplane.AssignManage}
		if err := s.CreateAssignment(b.Context(), a); err != nil {
			b.Fatal(err)
		}
		ids[i] = a.ID
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ok, err := s.ApplyNodeStatus(b.Context(), controlplane.NodeStatus{NodeID: node, Seq: uint64(i + 1),
			AssignmentID: ids[i], Result: []byte(`{"ok":true}`)})
		if err != nil || !ok {
			b.Fatal(ok, err)
		}
	}
}

// BenchmarkRenewLease measures the leader's lease renewal.
func BenchmarkRenewLease(b *testing.B, s FullStore) {
	b.ResetTimer() // not the store's open and migrations
	for i := 0; i < b.N; i++ {
		ok, err := s.AcquireLease(b.Context(), "bench", "leader", 15*time.Second)
		if err != nil || !ok {
			b.Fatal(ok, err)
		}
	}
}

func benchNode(b *testing.B, s FullStore) string {
	b.Helper()
	id := fmt.Sprintf("bench-node-%d", uniq())
	tok := &controlplane.BootstrapToken{Prefix: "bench", TokenHash: "bench-" + id, ExpiresAt: time.Now().Add(time.Hour)}
	if err := s.CreateBootstrapToken(b.Context(), tok); err != nil {
		b.Fatal(err)
	}
	if err := s.EnrollNode(b.Context(), tok.TokenHash, &controlplane.Node{ID: id, Hostname: id}); err != nil {
		b.Fatal(err)
	}
	return id
}
