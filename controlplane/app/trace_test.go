//go:build unix

package app

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/heteroflow/heteroflow/controlplane/tracing"
)

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
	startAgent(t, s, admin, "nvidia", "NVIDIA H100 80GB HBM3")
	waitUntil(t, "node online", 30*time.Second, func() bool {
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
	waitUntil(t, "the first heartbeat reporting the task", 30*time.Second, func() bool {
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
