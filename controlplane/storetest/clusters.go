package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
)

// ClusterStore is a store with the hub's member clusters.
type ClusterStore interface {
	controlplane.Store
	controlplane.ClusterStore
}

// ClusterOpener returns a fresh, empty ClusterStore and registers its
// Close with t.Cleanup.
type ClusterOpener func(t *testing.T) ClusterStore

// RunClusters runs the conformance suite of controlplane.ClusterStore.
func RunClusters(t *testing.T, open ClusterOpener) {
	groups := []struct {
		name string
		run  func(t *testing.T, s ClusterStore)
	}{
		{"Members", testClusterMembers},
		{"ForwardedTasks", testForwardedTasks},
		{"ForwardedSubmitKeys", testForwardedSubmitKeys},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			g.run(t, open(t))
		})
	}
}

func testClusterMembers(t *testing.T, s ClusterStore) {
	c := &controlplane.MemberCluster{Name: "east-1", URL: "https://east.example:3333", APIKeySealed: "sealed-v1:abc",
		CAPEM: Hostile[0], Fingerprint: "ab12", CreatedBy: "admin"}
	require.NoError(t, s.CreateCluster(ctx(t), c))
	require.NotZero(t, c.ID)
	got, err := s.GetCluster(ctx(t), c.ID)
	require.NoError(t, err)
	require.Equal(t, "east-1", got.Name)
	require.Equal(t, Hostile[0], got.CAPEM, "text is stored verbatim")
	require.Equal(t, controlplane.ClusterUnknown, got.Status)
	require.Nil(t, got.PolledAt)
	require.Nil(t, got.Summary)

	dup := *c
	require.ErrorIs(t, s.CreateCluster(ctx(t), &dup), controlplane.ErrConflict, "names are unique")
	bad := &controlplane.MemberCluster{Name: "Bad Name", URL: "http://x", APIKeySealed: "k"}
	require.ErrorIs(t, s.CreateCluster(ctx(t), bad), controlplane.ErrInvalid)
	require.NoError(t, s.CreateCluster(ctx(t), &controlplane.MemberCluster{Name: "a-west", URL: "http://w", APIKeySealed: "k"}))

	at := time.Now().UTC().Truncate(time.Millisecond)
	require.NoError(t, s.RecordClusterPoll(ctx(t), c.ID, controlplane.ClusterReachable, "1.2.3", "", []byte(`{"nodes":2}`), at))
	got, err = s.GetCluster(ctx(t), c.ID)
	require.NoError(t, err)
	require.Equal(t, controlplane.ClusterReachable, got.Status)
	require.Equal(t, "1.2.3", got.Version)
	require.JSONEq(t, `{"nodes":2}`, string(got.Summary))
	require.NotNil(t, got.PolledAt)
	require.WithinDuration(t, at, *got.PolledAt, time.Millisecond)

	// A failed poll keeps the last version and summary.
	require.NoError(t, s.RecordClusterPoll(ctx(t), c.ID, controlplane.ClusterUnreachable, "", "connection refused", nil, at.Add(time.Second)))
	got, err = s.GetCluster(ctx(t), c.ID)
	require.NoError(t, err)
	require.Equal(t, controlplane.ClusterUnreachable, got.Status)
	require.Equal(t, "connection refused", got.LastError)
	require.Equal(t, "1.2.3", got.Version)
	require.JSONEq(t, `{"nodes":2}`, string(got.Summary))

	list, err := s.ListClusters(ctx(t))
	require.NoError(t, err)
	require.Len(t, list, 2)
	require.Equal(t, "a-west", list[0].Name, "by name")

	require.NoError(t, s.DeleteCluster(ctx(t), c.ID))
	_, err = s.GetCluster(ctx(t), c.ID)
	require.ErrorIs(t, err, controlplane.ErrNotFound)
	require.ErrorIs(t, s.DeleteCluster(ctx(t), c.ID), controlplane.ErrNotFound)
	require.ErrorIs(t, s.RecordClusterPoll(ctx(t), c.ID, controlplane.ClusterReachable, "", "", nil, at), controlplane.ErrNotFound)
}

func testForwardedTasks(t *testing.T, s ClusterStore) {
	mk := func(cluster, name string, owner int64) *controlplane.ForwardedTask {
		t.Helper()
		ft := &controlplane.ForwardedTask{Cluster: cluster, Name: name, OwnerID: owner, Owner: "u", State: controlplane.ForwardedForwarding,
			Placement: []byte(`{"chosen":"` + cluster + `"}`)}
		require.NoError(t, s.CreateForwardedTask(ctx(t), ft))
		return ft
	}
	a1, a2, b1 := mk("a", Hostile[4], 1), mk("a", "two", 2), mk("b", "three", 1)
	require.ErrorIs(t, s.CreateForwardedTask(ctx(t), &controlplane.ForwardedTask{}), controlplane.ErrInvalid)

	require.NoError(t, s.UpdateForwardedTask(ctx(t), a1.ID, 41, controlplane.ForwardedState(controlplane.TaskQueued), "", nil))
	done := time.Now().UTC().Truncate(time.Millisecond)
	require.NoError(t, s.UpdateForwardedTask(ctx(t), a2.ID, 42, controlplane.ForwardedState(controlplane.TaskSucceeded), "exit 0", &done))
	require.NoError(t, s.UpdateForwardedTask(ctx(t), b1.ID, 7, controlplane.ForwardedState(controlplane.TaskRunning), "", nil))
	// A later update without the member's id keeps it.
	require.NoError(t, s.UpdateForwardedTask(ctx(t), b1.ID, 0, controlplane.ForwardedState(controlplane.TaskRunning), "still", nil))
	got, err := s.GetForwardedTask(ctx(t), b1.ID)
	require.NoError(t, err)
	require.EqualValues(t, 7, got.MemberTaskID)
	require.Equal(t, "still", got.Reason)
	require.JSONEq(t, `{"chosen":"b"}`, string(got.Placement))
	got, err = s.GetForwardedTask(ctx(t), a1.ID)
	require.NoError(t, err)
	require.Equal(t, Hostile[4], got.Name)
	got, err = s.GetForwardedTask(ctx(t), a2.ID)
	require.NoError(t, err)
	require.NotNil(t, got.FinishedAt)
	require.True(t, got.State.Terminal())

	n, err := s.MarkClusterTasksUnknown(ctx(t), "a", "member unreachable")
	require.NoError(t, err)
	require.Equal(t, 1, n, "only a's unfinished task")
	got, err = s.GetForwardedTask(ctx(t), a1.ID)
	require.NoError(t, err)
	require.Equal(t, controlplane.ForwardedUnknown, got.State)
	require.Equal(t, "member unreachable", got.Reason)
	n, err = s.MarkClusterTasksUnknown(ctx(t), "a", "again")
	require.NoError(t, err)
	require.Zero(t, n, "already unknown")

	list, total, err := s.ListForwardedTasks(ctx(t), controlplane.ForwardedFilter{Active: true})
	require.NoError(t, err)
	require.Equal(t, 2, total)
	require.Equal(t, []int64{b1.ID, a1.ID}, []int64{list[0].ID, list[1].ID}, "newest first")
	_, total, err = s.ListForwardedTasks(ctx(t), controlplane.ForwardedFilter{Cluster: "a"})
	require.NoError(t, err)
	require.Equal(t, 2, total)
	_, total, err = s.ListForwardedTasks(ctx(t), controlplane.ForwardedFilter{OwnerID: 1})
	require.NoError(t, err)
	require.Equal(t, 2, total)

	require.NoError(t, s.DeleteForwardedTask(ctx(t), a2.ID))
	_, err = s.GetForwardedTask(ctx(t), a2.ID)
	require.ErrorIs(t, err, controlplane.ErrNotFound)
	require.ErrorIs(t, s.UpdateForwardedTask(ctx(t), a2.ID, 1, controlplane.ForwardedUnknown, "", nil), controlplane.ErrNotFound)
}

// testForwardedSubmitKeys: a forwarded task created with an idempotency
// key is found again by its owner and key; the same owner and key again is
// ErrConflict with nothing stored (also when eight race); other owners
// keep their own keys.
func testForwardedSubmitKeys(t *testing.T, s ClusterStore) {
	mk := func(owner int64, name, key, hash string) (*controlplane.ForwardedTask, error) {
		ft := &controlplane.ForwardedTask{Cluster: "east", Name: name, OwnerID: owner, Owner: "u",
			State: controlplane.ForwardedForwarding, SubmitKey: &controlplane.SubmitKey{Key: key, Hash: hash}}
		return ft, s.CreateForwardedTask(ctx(t), ft)
	}
	first, err := mk(1, "keyed", "hub-7f3a", "h1")
	require.NoError(t, err)
	got, hash, err := s.ForwardedTaskBySubmitKey(ctx(t), 1, "hub-7f3a")
	require.NoError(t, err)
	require.Equal(t, first.ID, got.ID)
	require.Equal(t, "keyed", got.Name)
	require.Equal(t, "h1", hash)
	require.Nil(t, got.SubmitKey, "the key is not read back")

	again, err := mk(1, "again", "hub-7f3a", "h2")
	require.ErrorIs(t, err, controlplane.ErrConflict)
	require.Zero(t, again.ID)
	_, total, err := s.ListForwardedTasks(ctx(t), controlplane.ForwardedFilter{OwnerID: 1, Page: controlplane.Page{Limit: 10}})
	require.NoError(t, err)
	require.Equal(t, 1, total, "nothing of the refused record is stored")
	_, err = mk(2, "theirs", "hub-7f3a", "h1")
	require.NoError(t, err, "keys are per owner")
	_, _, err = s.ForwardedTaskBySubmitKey(ctx(t), 1, "never-used")
	require.ErrorIs(t, err, controlplane.ErrNotFound)

	oneOfEight(t, func() error { _, err := mk(3, "race", "race-key", "h"); return err })
}
