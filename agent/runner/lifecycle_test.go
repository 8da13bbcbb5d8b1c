package runner

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/agent/procgroup"
	"github.com/heteroflow/heteroflow/agent/protocol"
)

func TestCancelKillsWholeGroup(t *testing.T) {
	skipUnlessUnix(t)
	t.Parallel()
	r := newTestRunner(t, &recorder{})
	h, err := r.Start(context.Background(), protocol.TaskSpec{TaskID: 10,
		Command: []string{"sh", "-c", "sleep 600 & sleep 600"}})
	require.NoError(t, err)
	// sh plus its two sleeps.
	waitFor(t, "three processes in the task's group", func() bool { return len(groupMembers(h.PID())) == 3 })
	children := groupMembers(h.PID())
	h.Cancel("user asked")
	res := h.Wait()
	require.Equal(t, protocol.PhaseCancelled, res.Phase)
	require.Equal(t, "user asked", res.Reason)
	require.Equal(t, 128+15, *res.ExitCode) // SIGTERM
	require.Empty(t, groupMembers(h.PID()), "children %v survived", children)
	require.False(t, procgroup.Alive(h.PID()))
}

func TestCancelEscalatesToSIGKILL(t *testing.T) {
	skipUnlessUnix(t)
	t.Parallel()
	r := newTestRunner(t, &recorder{})
	// The shell ignores SIGTERM, so only the SIGKILL after the grace ends it.
	h, err := r.Start(context.Background(), protocol.TaskSpec{TaskID: 11,
		Command: []string{"sh", "-c", "trap '' TERM; sleep 600 & wait; wait"}})
	require.NoError(t, err)
	waitFor(t, "sleep child", func() bool { return len(groupMembers(h.PID())) == 2 })
	h.Cancel("stop")
	res := h.Wait()
	require.Equal(t, protocol.PhaseCancelled, res.Phase)
	require.Equal(t, 128+9, *res.ExitCode)
	require.Empty(t, groupMembers(h.PID()))
}

func TestTimeoutKillsGroup(t *testing.T) {
	skipUnlessUnix(t)
	t.Parallel()
	r := newTestRunner(t, &recorder{})
	h, err := r.Start(context.Background(), protocol.TaskSpec{TaskID: 12, TimeoutSeconds: 1,
		Command: []string{"sh", "-c", "sleep 600 & sleep 600"}})
	require.NoError(t, err)
	res := h.Wait()
	require.Equal(t, protocol.PhaseTimedOut, res.Phase)
	require.Contains(t, res.Reason, "timeout after 1s")
	require.Empty(t, groupMembers(h.PID()))
}

func TestLeftoverChildrenKilledAfterExit(t *testing.T) {
	skipUnlessUnix(t)
	t.Parallel()
	r := newTestRunner(t, &recorder{})
	h, err := r.Start(context.Background(), protocol.TaskSpec{TaskID: 13,
		Command: []string{"sh", "-c", "sleep 600 & echo started"}})
	require.NoError(t, err)
	res := h.Wait()
	require.Equal(t, protocol.PhaseSucceeded, res.Phase)
	require.Equal(t, "started\n", readAll(t, h, "stdout"))
	require.Empty(t, groupMembers(h.PID()))
}
