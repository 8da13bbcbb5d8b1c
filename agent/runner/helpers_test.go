package runner

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/agent/agenttest"
	"github.com/heteroflow/heteroflow/agent/procgroup"
)

// recorder is a Commander that records every vendor CLI call and answers
// from a table of canned outputs keyed by the joined command line prefix.
type recorder struct {
	mu      sync.Mutex
	calls   []string
	answers func(line string) (string, error)
}

func (r *recorder) Run(_ context.Context, name string, args ...string) ([]byte, error) {
	line := strings.Join(append([]string{name}, args...), " ")
	r.mu.Lock()
	r.calls = append(r.calls, line)
	r.mu.Unlock()
	if r.answers == nil {
		return nil, nil
	}
	out, err := r.answers(line)
	return []byte(out), err
}

func (r *recorder) Calls() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.calls...)
}

var quietLogger = slog.New(slog.NewTextHandler(io.Discard, nil))

func newTestRunner(t *testing.T, cli Commander) *Runner {
	t.Helper()
	return New(Config{
		LogDir: filepath.Join(agenttest.DataDir(t), "tasks"), Grace: 500 * time.Millisecond, CLI: cli,
		Logger: quietLogger,
	})
}

func readAll(t *testing.T, h *Handle, stream string) string {
	t.Helper()
	data, _, _, err := ReadLog(h.LogDir(), stream, 0, 1<<20)
	require.NoError(t, err)
	return string(data)
}

// groupMembers lists live (non-zombie) processes whose process group is pgid.
func groupMembers(pgid int) []int { return procgroup.Members(pgid) }

// waitFor polls cond (no timed assertion: the deadline only bounds a hang).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func ptr[T any](v T) *T { return &v }

var _ = fmt.Sprint
