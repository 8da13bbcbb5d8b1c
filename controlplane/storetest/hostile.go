package storetest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
)

// testHostile stores SQL-injection, HTML and unicode strings in every kind of
// text column and requires them back byte for byte (and the schema intact).
func testHostile(t *testing.T, open Opener) {
	s := open(t)
	for i, h := range Hostile {
		t.Run(fmt.Sprintf("%d", i), func(t *testing.T) {
			u := &controlplane.User{Username: h, DisplayName: h, Email: h, Role: controlplane.RoleUser, Tenant: h}
			require.NoError(t, s.CreateUser(ctx(t), u))
			got, err := s.GetUserByName(ctx(t), h)
			require.NoError(t, err)
			require.Equal(t, u, got)

			task := &controlplane.Task{OwnerID: u.ID, Reason: h, Spec: controlplane.TaskSpec{
				Name: h, Command: []string{"sh", "-c", h}, Args: []string{h}, Env: map[string]string{"V": h},
				Labels: map[string]string{"k": h}, Tenant: h, Project: h, Vendor: "nvidia", Models: []string{h}, Gang: h, GangSize: 1,
			}}
			require.NoError(t, s.CreateTask(ctx(t), task))
			gotTask, err := s.GetTask(ctx(t), task.ID)
			require.NoError(t, err)
			require.Equal(t, task, gotTask)
			require.Equal(t, h, gotTask.Owner)
			found, total, err := s.ListTasks(ctx(t), controlplane.TaskFilter{Query: h, Tenant: h, Label: map[string]string{"k": h}})
			require.NoError(t, err)
			require.Equal(t, 1, total)
			require.Equal(t, task.ID, found[0].ID)

			moved, err := s.TransitionTask(ctx(t), controlplane.Transition{TaskID: task.ID, From: controlplane.TaskSubmitted,
				To: controlplane.TaskQueued, Reason: h, Actor: h, NodeID: ptr(h)})
			require.NoError(t, err)
			require.Equal(t, h, moved.Reason)
			require.Equal(t, h, moved.NodeID)
			evs, err := s.ListTaskEvents(ctx(t), task.ID)
			require.NoError(t, err)
			require.Equal(t, h, evs[1].Actor)
			require.Equal(t, h, evs[1].Reason)

			e := &controlplane.AuditEntry{Actor: h, Module: controlplane.ModuleAPI, Action: h, Target: h, SourceIP: h, Result: h, Detail: h}
			require.NoError(t, s.AppendAudit(ctx(t), e))
			audits, _, err := s.ListAudit(ctx(t), controlplane.AuditFilter{Actor: h, Query: h})
			require.NoError(t, err)
			require.Len(t, audits, 1)
			require.Equal(t, h, audits[0].Detail)

			require.NoError(t, s.PutSetting(ctx(t), h, h))
			v, err := s.GetSetting(ctx(t), h)
			require.NoError(t, err)
			require.Equal(t, h, v)

			k := &controlplane.APIKey{Name: h, Prefix: h, SecretHash: h, Role: controlplane.RoleUser, NodeID: h}
			require.NoError(t, s.CreateAPIKey(ctx(t), k))
			gotKey, err := s.GetAPIKeyByPrefix(ctx(t), h)
			require.NoError(t, err)
			require.Equal(t, k, gotKey)
		})
	}
	// The schema survived: every table still answers.
	_, total, err := s.ListTasks(ctx(t), controlplane.TaskFilter{})
	require.NoError(t, err)
	require.Equal(t, len(Hostile), total)
	n, err := s.CountUsers(ctx(t))
	require.NoError(t, err)
	require.Equal(t, len(Hostile), n)
}

// testBounds: out-of-range numbers, NUL bytes and invalid UTF-8 are refused
// with ErrInvalid by every store alike, before anything is written.
func testBounds(t *testing.T, open Opener) {
	s := open(t)
	u := mkUser(t, s, "bounded", controlplane.RoleUser)
	cases := map[string]func(*controlplane.TaskSpec){
		"memory_mib 2^63-1":  func(sp *controlplane.TaskSpec) { sp.DeviceCount, sp.MemoryMiB = 1, 1<<63-1 },
		"memory_mib > max":   func(sp *controlplane.TaskSpec) { sp.DeviceCount, sp.MemoryMiB = 1, controlplane.MaxMemoryMiB+1 },
		"cpu_milli > max":    func(sp *controlplane.TaskSpec) { sp.CPUMilli = controlplane.MaxCPUMilli + 1 },
		"host memory > max":  func(sp *controlplane.TaskSpec) { sp.HostMemoryMiB = 1 << 62 },
		"gang_size > max":    func(sp *controlplane.TaskSpec) { sp.Gang, sp.GangSize = "g", controlplane.MaxGangSize+1 },
		"gang_size negative": func(sp *controlplane.TaskSpec) { sp.GangSize = -1 },
		"long tenant":        func(sp *controlplane.TaskSpec) { sp.Tenant = strings.Repeat("t", controlplane.MaxTenantLen+1) },
		"long project":       func(sp *controlplane.TaskSpec) { sp.Project = strings.Repeat("p", controlplane.MaxProjectLen+1) },
		"NUL in name":        func(sp *controlplane.TaskSpec) { sp.Name = "a\x00b" },
		"NUL in command":     func(sp *controlplane.TaskSpec) { sp.Command = []string{"sh", "-c", "x\x00"} },
		"NUL in env":         func(sp *controlplane.TaskSpec) { sp.Env = map[string]string{"A": "\x00"} },
		"NUL in tenant":      func(sp *controlplane.TaskSpec) { sp.Tenant = "ac\x00me" },
		"NUL in label":       func(sp *controlplane.TaskSpec) { sp.Labels = map[string]string{"k": "v\x00"} },
		"NUL in secret_env":  func(sp *controlplane.TaskSpec) { sp.SecretEnv = map[string]string{"K\x00": "v"} },
		"bad UTF-8 project":  func(sp *controlplane.TaskSpec) { sp.Project = "\xff\xfe" },
		"env name with =":    func(sp *controlplane.TaskSpec) { sp.Env = map[string]string{"A=B": "1"} },
	}
	for name, mut := range cases {
		t.Run(name, func(t *testing.T) {
			task := &controlplane.Task{OwnerID: u.ID, Spec: MinimalSpec("b")}
			mut(&task.Spec)
			require.ErrorIs(t, s.CreateTask(ctx(t), task), controlplane.ErrInvalid)
			require.Zero(t, task.ID)
		})
	}
	bad := &controlplane.User{Username: "nul", DisplayName: "x\x00", Role: controlplane.RoleUser}
	require.ErrorIs(t, s.CreateUser(ctx(t), bad), controlplane.ErrInvalid)
	tenant := "a\x00"
	_, err := s.UpdateUser(ctx(t), u.ID, controlplane.UserUpdate{Tenant: &tenant})
	require.ErrorIs(t, err, controlplane.ErrInvalid)
	_, total, err := s.ListTasks(ctx(t), controlplane.TaskFilter{})
	require.NoError(t, err)
	require.Zero(t, total, "nothing was stored")
}
