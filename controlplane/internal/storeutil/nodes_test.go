package storeutil_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

func TestStoredJSONDefaults(t *testing.T) {
	cases := []struct {
		name string
		got  func() string
		want string
	}{
		{"nil map", func() string { s, _ := storeutil.JSONOr(map[string]string(nil), "{}"); return s }, "{}"},
		{"map", func() string { s, _ := storeutil.JSONOr(map[string]string{"a": "b"}, "{}"); return s }, `{"a":"b"}`},
		{"running absent", func() string { return storeutil.RunningJSON(nil) }, "[]"},
		{"running null", func() string { return storeutil.RunningJSON(json.RawMessage("null")) }, "[]"},
		{"running kept", func() string { return storeutil.RunningJSON(json.RawMessage(`[1]`)) }, "[1]"},
		{"payload empty", func() string { return storeutil.PayloadJSON(nil) }, "{}"},
		{"end result", func() string { return storeutil.EndResult(controlplane.TaskFailed) }, `"failed"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { require.Equal(t, c.want, c.got()) })
	}
	require.Nil(t, storeutil.OptionalJSON(nil))
	require.Equal(t, `{}`, *storeutil.OptionalJSON(json.RawMessage(`{}`)))
	_, keep, err := storeutil.HeartbeatInventory(nil)
	require.NoError(t, err)
	require.True(t, keep, "a heartbeat without inventory keeps the stored one")
}

func TestNodeRules(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	require.NoError(t, storeutil.CheckBootstrapUse(false, now.Add(time.Second), now))
	require.ErrorIs(t, storeutil.CheckBootstrapUse(true, now.Add(time.Second), now), controlplane.ErrConflict)
	require.ErrorIs(t, storeutil.CheckBootstrapUse(false, now, now), controlplane.ErrConflict, "expires at now")

	st := controlplane.NodeStatus{NodeID: "n1", TaskID: 1, To: controlplane.TaskRunning}
	cases := []struct {
		name   string
		cur    controlplane.TaskState
		onNode string
		want   bool
	}{
		{"placed here", controlplane.TaskScheduled, "n1", true},
		{"placed elsewhere", controlplane.TaskScheduled, "n2", false},
		{"not in the table", controlplane.TaskSucceeded, "n1", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { require.Equal(t, c.want, storeutil.ApplyStatusTransition(st, c.cur, c.onNode)) })
	}
	require.Equal(t, "node:n1", storeutil.StatusTransition(st, controlplane.TaskScheduled).Actor)

	require.Equal(t, controlplane.MaxPageLimit, storeutil.LogLimit(0))
	require.Equal(t, controlplane.MaxPageLimit, storeutil.LogLimit(controlplane.MaxPageLimit+1))
	require.Equal(t, 5, storeutil.LogLimit(5))
	require.Equal(t, controlplane.MaxPageLimit, storeutil.ListLimit(-1))
	require.ErrorIs(t, storeutil.CheckRequeue(controlplane.Transition{To: controlplane.TaskFailed}), controlplane.ErrInvalid)
	require.ErrorIs(t, storeutil.CheckRequeue(controlplane.Transition{To: controlplane.TaskQueued, Retry: true}), controlplane.ErrInvalid)
	require.NoError(t, storeutil.CheckRequeue(controlplane.Transition{To: controlplane.TaskQueued}))
	require.ErrorIs(t, storeutil.CheckLease("l", "", time.Second), controlplane.ErrInvalid)
	require.NoError(t, storeutil.CheckLease("l", "h", time.Second))
}
