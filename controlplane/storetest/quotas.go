package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
)

func testQuotas(t *testing.T, open FullOpener) {
	s := open(t)
	require.ErrorIs(t, s.CreateQuota(ctx(t), &controlplane.Quota{}), controlplane.ErrInvalid)
	team := &controlplane.Quota{Tenant: "team", Devices: 8, MemoryMiB: 1 << 20}
	require.NoError(t, s.CreateQuota(ctx(t), team))
	require.Equal(t, controlplane.QuotaQueue, team.Policy, "default policy")
	proj := &controlplane.Quota{Tenant: "team", Project: "llm", Vendor: "nvidia", ComputePercent: 400, Policy: controlplane.QuotaRefuse}
	require.NoError(t, s.CreateQuota(ctx(t), proj))
	alpha := &controlplane.Quota{Tenant: "Alpha", Devices: 1}
	require.NoError(t, s.CreateQuota(ctx(t), alpha))
	require.ErrorIs(t, s.CreateQuota(ctx(t), &controlplane.Quota{Tenant: "team"}), controlplane.ErrConflict)

	got, err := s.GetQuota(ctx(t), proj.ID)
	require.NoError(t, err)
	require.Equal(t, *proj, *got)
	_, err = s.GetQuota(ctx(t), 1<<40)
	require.ErrorIs(t, err, controlplane.ErrNotFound)

	list, err := s.ListQuotas(ctx(t))
	require.NoError(t, err)
	require.Len(t, list, 3)
	// Bytewise order: upper case before lower case, "" before "llm".
	require.Equal(t, []int64{alpha.ID, team.ID, proj.ID}, []int64{list[0].ID, list[1].ID, list[2].ID})

	proj.Devices, proj.Policy = 2, controlplane.QuotaQueue
	require.NoError(t, s.UpdateQuota(ctx(t), proj))
	got, err = s.GetQuota(ctx(t), proj.ID)
	require.NoError(t, err)
	require.Equal(t, int64(2), got.Devices)
	require.Equal(t, controlplane.QuotaQueue, got.Policy)
	proj.Project, proj.Vendor = "", "" // now (team, "", "") like team
	require.ErrorIs(t, s.UpdateQuota(ctx(t), proj), controlplane.ErrConflict)
	require.ErrorIs(t, s.UpdateQuota(ctx(t), &controlplane.Quota{ID: 1 << 40, Tenant: "x"}), controlplane.ErrNotFound)
	require.ErrorIs(t, s.UpdateQuota(ctx(t), &controlplane.Quota{ID: proj.ID, Tenant: "x", Devices: -1}), controlplane.ErrInvalid)

	require.NoError(t, s.DeleteQuota(ctx(t), alpha.ID))
	require.ErrorIs(t, s.DeleteQuota(ctx(t), alpha.ID), controlplane.ErrNotFound)
}

func testPluginSettings(t *testing.T, open FullOpener) {
	s := open(t)
	got, err := s.ListPluginSettings(ctx(t))
	require.NoError(t, err)
	require.Empty(t, got)
	want := []controlplane.PluginSetting{
		{Name: "LoadAware", Enabled: true, Weight: 1.5, Position: 0},
		{Name: "BinPack", Enabled: false, Weight: 0.25, Position: 1},
	}
	require.NoError(t, s.PutPluginSettings(ctx(t), []controlplane.PluginSetting{want[1], want[0]}))
	got, err = s.ListPluginSettings(ctx(t))
	require.NoError(t, err)
	require.Equal(t, want, got, "in position order")
	require.NoError(t, s.PutPluginSettings(ctx(t), want[1:]))
	got, err = s.ListPluginSettings(ctx(t))
	require.NoError(t, err)
	require.Equal(t, want[1:], got, "replaced, not merged")
	dup := []controlplane.PluginSetting{want[0], want[0]}
	require.ErrorIs(t, s.PutPluginSettings(ctx(t), dup), controlplane.ErrConflict)
	got, err = s.ListPluginSettings(ctx(t))
	require.NoError(t, err)
	require.Equal(t, want[1:], got, "a failed replacement keeps the old settings")
}

func testTaskSchedule(t *testing.T, open FullOpener) {
	s := open(t)
	task := mkTask(t, s, 0, nil)
	_, err := s.GetTaskSchedule(ctx(t), task.ID)
	require.ErrorIs(t, err, controlplane.ErrNotFound)

	next := time.Now().Add(time.Minute).UTC().Truncate(time.Microsecond)
	whyAt := next.Add(-time.Second)
	sc := &controlplane.TaskSchedule{TaskID: task.ID, Attempts: 3, NextAttemptAt: next,
		Why: json.RawMessage(`{"nodes": {"n1": "insufficient memory"}, "total": 1}`), WhyAt: &whyAt, Preemptions: 1}
	require.NoError(t, s.PutTaskSchedule(ctx(t), sc))
	got, err := s.GetTaskSchedule(ctx(t), task.ID)
	require.NoError(t, err)
	require.Equal(t, 3, got.Attempts)
	require.True(t, next.Equal(got.NextAttemptAt))
	require.True(t, whyAt.Equal(*got.WhyAt))
	require.JSONEq(t, string(sc.Why), string(got.Why))
	require.Equal(t, 1, got.Preemptions)
	require.False(t, got.Final)
	require.Equal(t, sc.UpdatedAt, got.UpdatedAt)

	// Upsert: the second put replaces every field (why cleared).
	require.NoError(t, s.PutTaskSchedule(ctx(t), &controlplane.TaskSchedule{TaskID: task.ID, Final: true}))
	got, err = s.GetTaskSchedule(ctx(t), task.ID)
	require.NoError(t, err)
	require.Zero(t, got.Attempts)
	require.True(t, got.NextAttemptAt.IsZero())
	require.Nil(t, got.Why)
	require.Nil(t, got.WhyAt)
	require.True(t, got.Final)

	require.ErrorIs(t, s.PutTaskSchedule(ctx(t), &controlplane.TaskSchedule{TaskID: 1 << 40}), controlplane.ErrConflict)
}
