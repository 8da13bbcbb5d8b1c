package storetest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
)

func testListTasks(t *testing.T, open Opener) {
	s := open(t)
	alice := mkUser(t, s, "alice", controlplane.RoleUser)
	bob := mkUser(t, s, "bob", controlplane.RoleUser)
	names := []string{"Train-ResNet", "train-bert", "推理服务", "eval 100%", "eval_x", "batch-job", "Batch-Two"}
	var all []*controlplane.Task // creation order
	for i, n := range names {
		owner := alice.ID
		if i%2 == 1 {
			owner = bob.ID
		}
		task := mkTask(t, s, owner, func(sp *controlplane.TaskSpec) {
			sp.Name = n
			sp.Labels = map[string]string{"team": []string{"vision", "nlp"}[i%2], "idx": fmt.Sprint(i)}
			if i < 3 {
				sp.Labels["env"] = "prod"
				sp.Tenant = "acme"
			}
		})
		all = append(all, task)
	}
	move(t, s, all[0].ID, controlplane.TaskQueued)
	move(t, s, all[1].ID, controlplane.TaskQueued, controlplane.TaskScheduled, controlplane.TaskRunning)
	move(t, s, all[2].ID, controlplane.TaskCancelled)

	// expect returns the IDs of tasks (by creation index) newest first.
	expect := func(idx ...int) []int64 {
		var out []int64
		for _, i := range idx {
			out = append(out, all[i].ID)
		}
		slices.Sort(out)
		slices.Reverse(out)
		return out
	}
	// Time filters: compute the expectation from stored CreatedAt with the
	// documented half-open rule, so equal timestamps cannot flake the test.
	lo, hi := all[2].CreatedAt, all[5].CreatedAt
	var inRange []int
	for i, task := range all {
		if !task.CreatedAt.Before(lo) && task.CreatedAt.Before(hi) {
			inRange = append(inRange, i)
		}
	}
	var afterLo []int
	for i, task := range all {
		if !task.CreatedAt.Before(lo) {
			afterLo = append(afterLo, i)
		}
	}
	cases := []struct {
		name  string
		f     controlplane.TaskFilter
		want  []int64
		total int
	}{
		{"all newest first", controlplane.TaskFilter{}, expect(0, 1, 2, 3, 4, 5, 6), 7},
		{"one state", controlplane.TaskFilter{States: []controlplane.TaskState{controlplane.TaskSubmitted}}, expect(3, 4, 5, 6), 4},
		{"several states", controlplane.TaskFilter{States: []controlplane.TaskState{controlplane.TaskQueued, controlplane.TaskRunning}}, expect(0, 1), 2},
		{"owner", controlplane.TaskFilter{OwnerID: bob.ID}, expect(1, 3, 5), 3},
		{"one label", controlplane.TaskFilter{Label: map[string]string{"team": "vision"}}, expect(0, 2, 4, 6), 4},
		{"labels all-match", controlplane.TaskFilter{Label: map[string]string{"team": "vision", "env": "prod"}}, expect(0, 2), 2},
		{"label value mismatch", controlplane.TaskFilter{Label: map[string]string{"team": "vision", "idx": "1"}}, nil, 0},
		{"label missing key", controlplane.TaskFilter{Label: map[string]string{"nokey": "x"}}, nil, 0},
		{"time range half-open", controlplane.TaskFilter{CreatedAfter: &lo, CreatedBefore: &hi}, expect(inRange...), len(inRange)},
		{"after only", controlplane.TaskFilter{CreatedAfter: &lo}, expect(afterLo...), len(afterLo)},
		{"name case-insensitive", controlplane.TaskFilter{Query: "TRAIN"}, expect(0, 1), 2},
		{"name unicode", controlplane.TaskFilter{Query: "推理"}, expect(2), 1},
		{"percent literal", controlplane.TaskFilter{Query: "100%"}, expect(3), 1},
		{"underscore literal", controlplane.TaskFilter{Query: "l_"}, expect(4), 1},
		{"tenant", controlplane.TaskFilter{Tenant: "acme"}, expect(0, 1, 2), 3},
		{"combined", controlplane.TaskFilter{Tenant: "acme", OwnerID: alice.ID, States: []controlplane.TaskState{controlplane.TaskCancelled}}, expect(2), 1},
		{"page", controlplane.TaskFilter{Page: controlplane.Page{Limit: 3, Offset: 3}}, expect(1, 2, 3), 7},
		{"page past end", controlplane.TaskFilter{Page: controlplane.Page{Limit: 3, Offset: 7}}, nil, 7},
		{"filtered page", controlplane.TaskFilter{OwnerID: alice.ID, Page: controlplane.Page{Limit: 2, Offset: 2}}, expect(0, 2), 4},
		{"injection in query", controlplane.TaskFilter{Query: "' OR 1=1 --"}, nil, 0},
		{"injection in label", controlplane.TaskFilter{Label: map[string]string{"team' OR '1'='1": "x"}}, nil, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, total, err := s.ListTasks(ctx(t), c.f)
			require.NoError(t, err)
			require.Equal(t, c.total, total)
			require.NotNil(t, got, "lists are never nil")
			requireIDs(t, c.want, taskIDs(got))
		})
	}
	t.Run("node filter", func(t *testing.T) {
		s := open(t)
		placed := mkTask(t, s, 0, nil)
		mkTask(t, s, 0, nil)
		move(t, s, placed.ID, controlplane.TaskQueued)
		node := "node-a"
		_, err := s.TransitionTask(ctx(t), controlplane.Transition{TaskID: placed.ID, From: controlplane.TaskQueued,
			To: controlplane.TaskScheduled, NodeID: &node})
		require.NoError(t, err)
		got, total, err := s.ListTasks(ctx(t), controlplane.TaskFilter{NodeID: node})
		require.NoError(t, err)
		require.Equal(t, 1, total)
		requireIDs(t, []int64{placed.ID}, taskIDs(got))
		_, total, err = s.ListTasks(ctx(t), controlplane.TaskFilter{NodeID: "node-b"})
		require.NoError(t, err)
		require.Zero(t, total)
	})
	t.Run("default page size", func(t *testing.T) {
		s := open(t)
		for range controlplane.DefaultPageLimit + 3 {
			mkTask(t, s, 0, nil)
		}
		got, total, err := s.ListTasks(ctx(t), controlplane.TaskFilter{})
		require.NoError(t, err)
		require.Equal(t, controlplane.DefaultPageLimit+3, total)
		require.Len(t, got, controlplane.DefaultPageLimit)
		// Walking the pages visits every task exactly once.
		seen := map[int64]bool{}
		for off := 0; off < total; off += 10 {
			page, _, err := s.ListTasks(ctx(t), controlplane.TaskFilter{Page: controlplane.Page{Limit: 10, Offset: off}})
			require.NoError(t, err)
			for _, task := range page {
				require.False(t, seen[task.ID])
				seen[task.ID] = true
			}
		}
		require.Len(t, seen, total)
	})
}
