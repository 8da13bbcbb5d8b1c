package plugins

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/scheduler/framework"
	"github.com/heteroflow/heteroflow/scheduler/model"
)

// TestAuditSinks: every decision reaches the configured sink.
func TestAuditSinks(t *testing.T) {
	t.Parallel()
	h := &handle{cl: newCluster(t, gpuNode("a", 8000, "T4", 1))}
	p, err := NewAudit(framework.Args{}, h)
	require.NoError(t, err)
	var got []*framework.Decision
	p.(*Audit).SetSink(func(_ context.Context, d *framework.Decision) { got = append(got, d) })
	p.(*Audit).Audit(context.Background(), &framework.Decision{Request: &model.Request{ID: "x"}, Status: "scheduled"})
	require.Len(t, got, 1)
	require.Equal(t, "x", got[0].Request.ID)
}
