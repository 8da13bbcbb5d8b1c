package state

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/agent/procgroup"
)

func TestStorePersists(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state.json")
	s, err := Open(path)
	require.NoError(t, err)
	now := time.Unix(1700000000, 0).UTC()
	require.NoError(t, s.Put(Record{TaskID: 2, Attempt: 0, PID: 10, PGID: 10, StartedAt: now}))
	require.NoError(t, s.Put(Record{TaskID: 1, Attempt: 1, PID: 11, PGID: 11, StartedAt: now}))
	st, err := os.Stat(path)
	require.NoError(t, err)
	if runtime.GOOS != "windows" {
		require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	}
	s2, err := Open(path)
	require.NoError(t, err)
	got := s2.List()
	require.Len(t, got, 2)
	require.Equal(t, int64(1), got[0].TaskID)
	require.NoError(t, s2.Remove(1, 1))
	require.NoError(t, s2.MarkHandled(42))
	s3, err := Open(path)
	require.NoError(t, err)
	require.Len(t, s3.List(), 1)
	require.Equal(t, []int64{42}, s3.Handled())
}

func TestOpenRejectsCorruptFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state.json")
	require.NoError(t, os.WriteFile(path, []byte("{not json"), 0o600))
	_, err := Open(path)
	require.Error(t, err)
}

func TestReconcileKillsOrphanGroup(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("needs a Unix shell")
	}
	t.Parallel()
	// A "previous agent" started this group and died.
	cmd := exec.Command("sh", "-c", "sleep 600 & sleep 600")
	procgroup.Prepare(cmd)
	require.NoError(t, cmd.Start())
	go cmd.Wait() //nolint:errcheck // reaped so the leader does not stay a zombie
	pid := cmd.Process.Pid

	path := filepath.Join(t.TempDir(), "state.json")
	s, err := Open(path)
	require.NoError(t, err)
	require.NoError(t, s.Put(Record{TaskID: 5, PID: pid, PGID: pid, ProcStart: Identify(pid), StartedAt: time.Now()}))
	// A record whose process is long gone (pid reuse guard: wrong start time).
	require.NoError(t, s.Put(Record{TaskID: 6, PID: os.Getpid(), PGID: 999999, ProcStart: 1}))

	s2, err := Open(path)
	require.NoError(t, err)
	orphans, err := s2.Reconcile(context.Background(), 2*time.Second, nil)
	require.NoError(t, err)
	require.Len(t, orphans, 2)
	require.True(t, orphans[0].WasRunning)
	require.NoError(t, orphans[0].KillErr)
	require.False(t, orphans[1].WasRunning)
	require.False(t, procgroup.Alive(pid))
	require.Empty(t, s2.List())
}

func TestStillRunningRejectsReusedPID(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("start-time check needs /proc")
	}
	t.Parallel()
	me := os.Getpid()
	// Our own pid with a wrong start time looks like pid reuse. (Our pgid is
	// the test runner's group, which is alive.)
	pgid, err := syscallGetpgid(me)
	require.NoError(t, err)
	require.False(t, StillRunning(Record{PID: me, PGID: pgid, ProcStart: Identify(me) + 1}))
	require.True(t, StillRunning(Record{PID: me, PGID: pgid, ProcStart: Identify(me)}))
}
