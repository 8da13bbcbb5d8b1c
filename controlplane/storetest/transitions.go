package storetest

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
)

func testTransitions(t *testing.T, open Opener) {
	t.Run("Lifecycle", func(t *testing.T) {
		s := open(t)
		task := mkTask(t, s, 0, func(sp *controlplane.TaskSpec) { sp.MaxRetries = 1 })
		tr := func(from, to controlplane.TaskState, mut func(*controlplane.Transition)) *controlplane.Task {
			t.Helper()
			x := controlplane.Transition{TaskID: task.ID, From: from, To: to, Reason: "because " + string(to), Actor: "scheduler"}
			if mut != nil {
				mut(&x)
			}
			got, err := s.TransitionTask(ctx(t), x)
			require.NoError(t, err)
			require.Equal(t, to, got.State)
			require.Equal(t, x.Reason, got.Reason)
			stored, err := s.GetTask(ctx(t), task.ID)
			require.NoError(t, err)
			require.Equal(t, got, stored, "the returned task is what is stored")
			return got
		}
		tr(controlplane.TaskSubmitted, controlplane.TaskQueued, nil)
		got := tr(controlplane.TaskQueued, controlplane.TaskScheduled, func(x *controlplane.Transition) { x.NodeID = ptr("node-a") })
		require.Equal(t, "node-a", got.NodeID)
		got = tr(controlplane.TaskScheduled, controlplane.TaskRunning, nil)
		require.NotNil(t, got.StartedAt)
		require.Nil(t, got.FinishedAt)
		require.Equal(t, "node-a", got.NodeID, "node kept when not given")
		got = tr(controlplane.TaskRunning, controlplane.TaskFailed, func(x *controlplane.Transition) { x.ExitCode = ptr(137) })
		require.NotNil(t, got.FinishedAt)
		require.Equal(t, 137, *got.ExitCode)
		require.Zero(t, got.Attempt)

		got = tr(controlplane.TaskFailed, controlplane.TaskQueued, func(x *controlplane.Transition) { x.Retry = true })
		require.Equal(t, 1, got.Attempt, "retry increments attempt")
		require.Nil(t, got.ExitCode, "a new attempt clears the run result")
		require.Nil(t, got.StartedAt)
		require.Nil(t, got.FinishedAt)
		require.Empty(t, got.NodeID)

		tr(controlplane.TaskQueued, controlplane.TaskScheduled, func(x *controlplane.Transition) { x.NodeID = ptr("node-b") })
		got = tr(controlplane.TaskScheduled, controlplane.TaskQueued, nil)
		require.Equal(t, 1, got.Attempt, "a requeue is not a retry")
		tr(controlplane.TaskQueued, controlplane.TaskScheduled, func(x *controlplane.Transition) { x.NodeID = ptr("node-c") })
		tr(controlplane.TaskScheduled, controlplane.TaskRunning, nil)
		got = tr(controlplane.TaskRunning, controlplane.TaskTimedOut, nil)
		require.NotNil(t, got.FinishedAt)

		// MaxRetries is 1 and one retry is used: the next one is refused.
		_, err := s.TransitionTask(ctx(t), controlplane.Transition{TaskID: task.ID, From: controlplane.TaskTimedOut, To: controlplane.TaskQueued, Retry: true})
		require.ErrorIs(t, err, controlplane.ErrConflict)

		evs, err := s.ListTaskEvents(ctx(t), task.ID)
		require.NoError(t, err)
		want := []controlplane.TaskState{controlplane.TaskSubmitted, controlplane.TaskQueued, controlplane.TaskScheduled,
			controlplane.TaskRunning, controlplane.TaskFailed, controlplane.TaskQueued, controlplane.TaskScheduled,
			controlplane.TaskQueued, controlplane.TaskScheduled, controlplane.TaskRunning, controlplane.TaskTimedOut}
		require.Len(t, evs, len(want))
		for i, e := range evs {
			require.Equal(t, want[i], e.To, "event %d", i)
			if i > 0 {
				require.Equal(t, want[i-1], e.From, "event %d", i)
				require.Equal(t, "scheduler", e.Actor)
				require.Greater(t, e.ID, evs[i-1].ID)
			}
		}
	})
	t.Run("Errors", func(t *testing.T) {
		s := open(t)
		task := mkTask(t, s, 0, nil)
		cases := []struct {
			name string
			tr   controlplane.Transition
			want error
		}{
			{"illegal move", controlplane.Transition{TaskID: task.ID, From: controlplane.TaskSubmitted, To: controlplane.TaskRunning}, controlplane.ErrConflict},
			{"stale from", controlplane.Transition{TaskID: task.ID, From: controlplane.TaskQueued, To: controlplane.TaskScheduled}, controlplane.ErrConflict},
			{"unknown state", controlplane.Transition{TaskID: task.ID, From: controlplane.TaskSubmitted, To: "paused"}, controlplane.ErrInvalid},
			{"retry not to queued", controlplane.Transition{TaskID: task.ID, From: controlplane.TaskSubmitted, To: controlplane.TaskCancelled, Retry: true}, controlplane.ErrInvalid},
			{"missing task", controlplane.Transition{TaskID: 999999, From: controlplane.TaskSubmitted, To: controlplane.TaskQueued}, controlplane.ErrNotFound},
			{"retry without retries", controlplane.Transition{TaskID: task.ID, From: controlplane.TaskSubmitted, To: controlplane.TaskQueued, Retry: true}, controlplane.ErrConflict},
			{"terminal is final", controlplane.Transition{TaskID: task.ID, From: controlplane.TaskCancelled, To: controlplane.TaskQueued}, controlplane.ErrConflict},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				_, err := s.TransitionTask(ctx(t), c.tr)
				require.ErrorIs(t, err, c.want)
			})
		}
		got, err := s.GetTask(ctx(t), task.ID)
		require.NoError(t, err)
		require.Equal(t, controlplane.TaskSubmitted, got.State, "failed transitions change nothing")
		evs, err := s.ListTaskEvents(ctx(t), task.ID)
		require.NoError(t, err)
		require.Len(t, evs, 1, "failed transitions write no event")
	})
	t.Run("Race", func(t *testing.T) {
		s := open(t)
		const tasks, racers = 5, 8
		for range tasks {
			task := mkTask(t, s, 0, nil)
			errs := make([]error, racers)
			var wg sync.WaitGroup
			for i := range racers {
				wg.Go(func() {
					_, errs[i] = s.TransitionTask(ctx(t), controlplane.Transition{TaskID: task.ID,
						From: controlplane.TaskSubmitted, To: controlplane.TaskCancelled, Actor: "racer"})
				})
			}
			wg.Wait()
			wins := 0
			for _, err := range errs {
				if err == nil {
					wins++
					continue
				}
				require.ErrorIs(t, err, controlplane.ErrConflict)
			}
			require.Equal(t, 1, wins, "exactly one of %d identical transitions wins", racers)
			evs, err := s.ListTaskEvents(ctx(t), task.ID)
			require.NoError(t, err)
			require.Len(t, evs, 2)
		}
	})
}
