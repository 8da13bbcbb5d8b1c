package outbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/agent/protocol"
)

func upd(task int64, phase string) protocol.StatusUpdate {
	return protocol.StatusUpdate{TaskID: task, Phase: phase, At: time.Unix(1700000000, 0).UTC()}
}

func seqs(us []protocol.StatusUpdate) []uint64 {
	out := make([]uint64, len(us))
	for i, u := range us {
		out[i] = u.Seq
	}
	return out
}

func TestAppendAckAndRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	o, err := Open(dir, 3)
	require.NoError(t, err)
	for i := 1; i <= 7; i++ {
		s, err := o.Append(upd(int64(i), protocol.PhaseStarted))
		require.NoError(t, err)
		require.Equal(t, uint64(i), s)
	}
	require.Equal(t, []uint64{1, 2, 3, 4, 5, 6, 7}, seqs(o.Pending(0)))
	require.Equal(t, []uint64{1, 2}, seqs(o.Pending(2)))

	require.NoError(t, o.Ack(4))
	require.Equal(t, []uint64{5, 6, 7}, seqs(o.Pending(0)))
	// Segments [1..3] hold nothing unacknowledged any more; [4..6] still holds 5, 6.
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	require.Len(t, files, 2)
	require.NoError(t, o.Ack(2)) // going backwards is a no-op
	require.Error(t, o.Ack(99))
	require.NoError(t, o.Close())

	// A restarted agent sees exactly what was not acknowledged, and keeps numbering.
	o2, err := Open(dir, 3)
	require.NoError(t, err)
	require.Equal(t, []uint64{5, 6, 7}, seqs(o2.Pending(0)))
	require.Equal(t, uint64(4), o2.Acked())
	s, err := o2.Append(upd(8, protocol.PhaseSucceeded))
	require.NoError(t, err)
	require.Equal(t, uint64(8), s)
	p := o2.Pending(0)
	require.Equal(t, int64(8), p[3].TaskID)
	require.Equal(t, protocol.PhaseSucceeded, p[3].Phase)
}

func TestTornTailIsCut(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	o, err := Open(dir, 100)
	require.NoError(t, err)
	_, err = o.Append(upd(1, protocol.PhaseStarted))
	require.NoError(t, err)
	require.NoError(t, o.Close())
	seg := filepath.Join(dir, "00000000000000000001.jsonl")
	f, err := os.OpenFile(seg, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"seq":2,"task_id":2,"pha`) // crash mid-write
	require.NoError(t, err)
	require.NoError(t, f.Close())

	o2, err := Open(dir, 100)
	require.NoError(t, err)
	require.Equal(t, []uint64{1}, seqs(o2.Pending(0)))
	s, err := o2.Append(upd(2, protocol.PhaseStarted))
	require.NoError(t, err)
	require.Equal(t, uint64(2), s)
	require.NoError(t, o2.Close())
	o3, err := Open(dir, 100)
	require.NoError(t, err)
	require.Equal(t, []uint64{1, 2}, seqs(o3.Pending(0)))
}

// flakyServer fails every other request, sometimes after applying it (the
// reply was lost), and dedupes by sequence like the real server.
type flakyServer struct {
	mu      sync.Mutex
	calls   int
	applied []uint64
	last    uint64
}

func (s *flakyServer) send(_ context.Context, batch []protocol.StatusUpdate) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if s.calls%3 == 1 {
		return 0, errors.New("connection refused")
	}
	for _, u := range batch {
		if u.Seq == s.last+1 {
			s.applied = append(s.applied, u.Seq)
			s.last = u.Seq
		}
	}
	if s.calls%3 == 2 {
		return 0, errors.New("reply lost") // applied, but the agent does not know
	}
	return s.last, nil
}

func (s *flakyServer) Applied() []uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]uint64(nil), s.applied...)
}

func TestRunDeliversInOrderExactlyOnce(t *testing.T) {
	t.Parallel()
	o, err := Open(t.TempDir(), 4)
	require.NoError(t, err)
	srv := &flakyServer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		o.Run(ctx, srv.send, 3, Backoff{Min: time.Millisecond, Max: 5 * time.Millisecond}, nil)
		close(done)
	}()
	var want []uint64
	for i := 1; i <= 20; i++ {
		s, err := o.Append(upd(int64(i), protocol.PhaseStarted))
		require.NoError(t, err)
		want = append(want, s)
	}
	deadline := time.Now().Add(20 * time.Second)
	for o.Len() > 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
	require.Zero(t, o.Len())
	require.Equal(t, want, srv.Applied())
	require.Equal(t, uint64(20), o.Acked())
}

func TestBackoffGrowsAndResets(t *testing.T) {
	t.Parallel()
	b := Backoff{Min: 100 * time.Millisecond, Max: time.Second}
	var last time.Duration
	for i := 0; i < 10; i++ {
		last = b.Next()
		require.Greater(t, last, time.Duration(0))
		require.LessOrEqual(t, last, time.Second)
	}
	require.GreaterOrEqual(t, last, 500*time.Millisecond) // capped window: at least half of Max
	b.Reset()
	require.LessOrEqual(t, b.Next(), 100*time.Millisecond)
}
