package storetest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
)

// FullSpec sets every TaskSpec field to a non-zero value.
func FullSpec(name string) controlplane.TaskSpec {
	return controlplane.TaskSpec{
		Name: name, Command: []string{"python", "train.py"}, Image: "registry/img:1", Args: []string{"--epochs", "3"},
		Env: map[string]string{"A": "1", "LANG": "zh_CN.UTF-8"}, SecretEnv: map[string]string{"TOKEN": "s3cr3t"}, DeviceCount: 2, MemoryMiB: 8192, ComputePercent: 50,
		Vendor: "nvidia", Models: []string{"A100", "H100"}, QoS: controlplane.QoSSilver, Priority: 700,
		TimeoutSeconds: 3600, MaxRetries: 2, Labels: map[string]string{"team": "vision", "env": "prod"},
		Tenant: "acme", Project: "p1", CPUMilli: 4000, HostMemoryMiB: 16384, RDMA: true, Gang: "g1", GangSize: 2,
		AllowBestEffort: true,
	}
}

func testTasks(t *testing.T, open Opener) {
	t.Run("CreateGet", func(t *testing.T) {
		s := open(t)
		u := mkUser(t, s, "alice", controlplane.RoleUser)
		task := &controlplane.Task{Spec: FullSpec("train"), OwnerID: u.ID, Reason: "api"}
		require.NoError(t, s.CreateTask(ctx(t), task))
		require.NotZero(t, task.ID)
		require.Equal(t, controlplane.TaskSubmitted, task.State)
		require.Equal(t, "alice", task.Owner, "owner name comes from the user")
		require.False(t, task.CreatedAt.IsZero())

		got, err := s.GetTask(ctx(t), task.ID)
		require.NoError(t, err)
		require.Equal(t, task, got)

		evs, err := s.ListTaskEvents(ctx(t), task.ID)
		require.NoError(t, err)
		require.Len(t, evs, 1)
		require.Equal(t, controlplane.TaskState(""), evs[0].From)
		require.Equal(t, controlplane.TaskSubmitted, evs[0].To)
		require.Equal(t, "alice", evs[0].Actor)
		require.Equal(t, task.ID, evs[0].TaskID)
		require.Equal(t, task.CreatedAt, evs[0].At)
	})
	t.Run("Defaults", func(t *testing.T) {
		s := open(t)
		task := &controlplane.Task{Spec: MinimalSpec("cpu-only")}
		require.NoError(t, s.CreateTask(ctx(t), task), "owner 0 is a system task")
		got, err := s.GetTask(ctx(t), task.ID)
		require.NoError(t, err)
		require.Equal(t, controlplane.QoSBronze, got.Spec.QoS, "validation defaults QoS")
		require.Nil(t, got.Spec.Env, "empty maps come back nil")
		require.Nil(t, got.Spec.Labels)
		require.Nil(t, got.Spec.Args)
		require.Nil(t, got.ExitCode)
		require.Nil(t, got.StartedAt)
		require.Zero(t, got.OwnerID)
		evs, err := s.ListTaskEvents(ctx(t), task.ID)
		require.NoError(t, err)
		require.Equal(t, "system", evs[0].Actor)

		named := &controlplane.Task{Spec: MinimalSpec("named"), Owner: "svc-ci"}
		require.NoError(t, s.CreateTask(ctx(t), named))
		require.Equal(t, "svc-ci", named.Owner, "a given owner name is kept")
	})
	t.Run("Errors", func(t *testing.T) {
		s := open(t)
		cases := []struct {
			name string
			task controlplane.Task
			want error
		}{
			{"no name", controlplane.Task{Spec: controlplane.TaskSpec{Command: []string{"x"}}}, controlplane.ErrInvalid},
			{"no command", controlplane.Task{Spec: controlplane.TaskSpec{Name: "n"}}, controlplane.ErrInvalid},
			{"compute out of range", controlplane.Task{Spec: controlplane.TaskSpec{Name: "n", Command: []string{"x"}, DeviceCount: 1, ComputePercent: 5}}, controlplane.ErrInvalid},
			{"bad qos", controlplane.Task{Spec: controlplane.TaskSpec{Name: "n", Command: []string{"x"}, QoS: "platinum"}}, controlplane.ErrInvalid},
			{"missing owner", controlplane.Task{Spec: MinimalSpec("n"), OwnerID: 999999}, controlplane.ErrNotFound},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				require.ErrorIs(t, s.CreateTask(ctx(t), &c.task), c.want)
			})
		}
		_, total, err := s.ListTasks(ctx(t), controlplane.TaskFilter{})
		require.NoError(t, err)
		require.Zero(t, total, "failed creates leave nothing behind")
		_, err = s.GetTask(ctx(t), 999999)
		require.ErrorIs(t, err, controlplane.ErrNotFound)
		_, err = s.ListTaskEvents(ctx(t), 999999)
		require.ErrorIs(t, err, controlplane.ErrNotFound)
	})
}
