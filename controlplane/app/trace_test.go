//go:build unix

package app

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/heteroflow/heteroflow/agent/daemon"
	"github.com/heteroflow/heteroflow/controlplane/tracing"
	"github.com/heteroflow/heteroflow/receivers/fakesmi"
	"github.com/heteroflow/heteroflow/receivers/smi"
)

// simNode plays a node's vendor CLIs with fakesmi, in process.
type simNode struct{ opts fakesmi.Options }

func (f *simNode) Run(_ context.Context, name string, args ...string) ([]byte, error) {
	known := false
	for _, tool := range fakesmi.ToolsFor(f.opts.Profile.Vendor) {
		known = known || tool == name
	}
	if !known {
		return nil, fmt.Errorf("%w: %s", smi.ErrToolNotFound, name)
	}
	var out bytes.Buffer
	err := fakesmi.Run(&out, f.opts, name, args)
	return out.Bytes(), err
}

// TestTaskTrace: with a tracer provider installed, one task's path is one
// trace — the submitting API request → its scheduling cycle → the bind →
// the agent's start → the first heartbeat that reports it — each span the
// child of the one before, across the server and a real agent.
func TestTaskTrace(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tracing.Install(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	t.Cleanup(func() { tracing.Install(nil) })

	s := startServer(t, t.TempDir())
	admin := s.adminToken()
	_, token := s.bootstrapToken(admin)
	dir := t.TempDir()
	sim := &simNode{opts: fakesmi.Options{StatePath: filepath.Join(dir, "fake-state.json"),
		Profile: &fakesmi.Profile{Vendor: "nvidia", Model: "NVIDIA H100 80GB HBM3", Count: 2, MemoryMiB: 81559}}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- daemon.Run(ctx, daemon.Config{Server: s.base, Token: token, DataDir: filepath.Join(dir, "agent"),
			Heartbeat: 200 * time.Millisecond, PollWait: time.Second, Grace: time.Second,
			Logger: slog.New(slog.DiscardHandler), SMI: sim.Run, CLI: sim})
	}()
	t.Cleanup(func() { cancel(); <-done })
	waitTrace(t, "node online", func() bool {
		var nodes struct {
			Items []struct {
				State string `json:"state"`
			} `json:"items"`
		}
		s.ok(http.StatusOK, http.MethodGet, "/api/v1/nodes", admin, nil, &nodes)
		return len(nodes.Items) == 1 && nodes.Items[0].State == "online"
	})

	var task struct {
		ID int64 `json:"id"`
	}
	s.ok(http.StatusCreated, http.MethodPost, "/api/v1/tasks", admin,
		map[string]any{"name": "traced", "command": []string{"sleep", "30"}, "device_count": 1, "vendor": "nvidia"}, &task)

	// The first heartbeat span of the task, then its ancestors up to the root.
	var last sdktrace.ReadOnlySpan
	waitTrace(t, "the first heartbeat reporting the task", func() bool {
		for _, sp := range rec.Ended() {
			if sp.Name() == "agentapi.heartbeat" && hasTask(sp, task.ID) {
				last = sp
				return true
			}
		}
		return false
	})
	byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	for _, sp := range rec.Ended() {
		byID[sp.SpanContext().SpanID()] = sp
	}
	var got []string
	for sp := last; sp != nil; {
		require.Equal(t, last.SpanContext().TraceID(), sp.SpanContext().TraceID(), "%s is in another trace", sp.Name())
		got = append([]string{sp.Name()}, got...)
		if !sp.Parent().IsValid() {
			break
		}
		parent, ok := byID[sp.Parent().SpanID()]
		require.True(t, ok, "the parent of %s was not recorded (chain so far %v)", sp.Name(), got)
		sp = parent
	}
	require.Equal(t, []string{"HTTP POST /api/v1/tasks", "scheduling.cycle", "scheduling.bind", "agent.task.start", "agentapi.heartbeat"}, got)
	for _, sp := range byID {
		if sp.Name() == "scheduling.cycle" || sp.Name() == "scheduling.bind" || sp.Name() == "agent.task.start" {
			require.True(t, hasTask(sp, task.ID), "%s has no task.id", sp.Name())
		}
	}
}

func hasTask(sp sdktrace.ReadOnlySpan, id int64) bool {
	for _, a := range sp.Attributes() {
		if a.Key == "task.id" && a.Value.AsInt64() == id {
			return true
		}
	}
	return false
}

func waitTrace(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
