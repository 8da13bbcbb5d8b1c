package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
)

func testAudit(t *testing.T, open Opener) {
	s := open(t)
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	entries := []*controlplane.AuditEntry{
		{At: base, Actor: "alice", Module: controlplane.ModuleAuth, Level: controlplane.LevelInfo, Action: "auth.login", Result: "ok", SourceIP: "10.0.0.1"},
		{At: base.Add(time.Minute), Actor: "bob", Module: controlplane.ModuleAuth, Level: controlplane.LevelWarn, Action: "auth.login", Result: "failed: bad password"},
		{At: base.Add(2 * time.Minute), Actor: "alice", Module: controlplane.ModuleAPI, Level: controlplane.LevelInfo, Action: "task.create", Target: "task/42", Result: "ok"},
		{At: base.Add(3 * time.Minute), Actor: "system", Module: controlplane.ModuleScheduler, Level: controlplane.LevelError, Action: "task.fail", Target: "task/42", Detail: "节点 node-7 lost"},
		{At: base.Add(4 * time.Minute), Actor: "apikey:hf_ab", Module: controlplane.ModuleAgent, Level: controlplane.LevelDebug, Action: "node.heartbeat", Target: "node/7", Detail: "<img src=x onerror=alert(1)>"},
	}
	for _, e := range entries {
		require.NoError(t, s.AppendAudit(ctx(t), e))
		require.NotZero(t, e.ID)
	}
	now := &controlplane.AuditEntry{Actor: "carol", Module: controlplane.ModuleAPI, Action: "user.create", Target: "user/9"}
	require.NoError(t, s.AppendAudit(ctx(t), now))
	require.WithinDuration(t, time.Now(), now.At, time.Minute, "zero At means now")
	require.Equal(t, controlplane.LevelInfo, now.Level, "level defaults to INFO")
	entries = append(entries, now)

	require.ErrorIs(t, s.AppendAudit(ctx(t), &controlplane.AuditEntry{Module: controlplane.ModuleAPI}), controlplane.ErrInvalid)
	require.ErrorIs(t, s.AppendAudit(ctx(t), &controlplane.AuditEntry{Action: "x"}), controlplane.ErrInvalid)

	ids := func(idx ...int) []int64 {
		out := make([]int64, 0, len(idx))
		for _, i := range idx {
			out = append(out, entries[i].ID)
		}
		return out
	}
	since, until := base.Add(time.Minute), base.Add(3*time.Minute)
	cases := []struct {
		name  string
		f     controlplane.AuditFilter
		want  []int64
		total int
	}{
		{"all newest first", controlplane.AuditFilter{}, ids(5, 4, 3, 2, 1, 0), 6},
		{"module", controlplane.AuditFilter{Module: controlplane.ModuleAuth}, ids(1, 0), 2},
		{"level", controlplane.AuditFilter{Level: controlplane.LevelError}, ids(3), 1},
		{"actor exact", controlplane.AuditFilter{Actor: "alice"}, ids(2, 0), 2},
		{"actor is not a substring match", controlplane.AuditFilter{Actor: "ali"}, nil, 0},
		{"since inclusive until exclusive", controlplane.AuditFilter{Since: &since, Until: &until}, ids(2, 1), 2},
		{"keyword in action", controlplane.AuditFilter{Query: "LOGIN"}, ids(1, 0), 2},
		{"keyword in target", controlplane.AuditFilter{Query: "task/42"}, ids(3, 2), 2},
		{"keyword in actor", controlplane.AuditFilter{Query: "apikey:"}, ids(4), 1},
		{"keyword in detail unicode", controlplane.AuditFilter{Query: "节点"}, ids(3), 1},
		{"keyword html verbatim", controlplane.AuditFilter{Query: "onerror=alert"}, ids(4), 1},
		{"combined", controlplane.AuditFilter{Module: controlplane.ModuleAuth, Level: controlplane.LevelWarn, Query: "login"}, ids(1), 1},
		{"page", controlplane.AuditFilter{Page: controlplane.Page{Limit: 2, Offset: 2}}, ids(3, 2), 6},
		{"page past end", controlplane.AuditFilter{Page: controlplane.Page{Limit: 2, Offset: 6}}, nil, 6},
		{"injection", controlplane.AuditFilter{Query: `" OR 1=1 --`}, nil, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, total, err := s.ListAudit(ctx(t), c.f)
			require.NoError(t, err)
			require.Equal(t, c.total, total)
			var gotIDs []int64
			for _, e := range got {
				gotIDs = append(gotIDs, e.ID)
			}
			require.NotNil(t, got, "lists are never nil")
			requireIDs(t, c.want, gotIDs)
		})
	}
	got, _, err := s.ListAudit(ctx(t), controlplane.AuditFilter{Level: controlplane.LevelDebug})
	require.NoError(t, err)
	require.Len(t, got, 1)
	want := *entries[4]
	want.At = want.At.UTC()
	require.Equal(t, &want, got[0], "every field round-trips")
}
