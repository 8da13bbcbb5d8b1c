package scheduling

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/collector"
	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/scheduler/plugins"
)

// TestLoadAwareMatchesTheAgentsSeries: the host label LoadAware joins on must
// be the host_name value the agent's collector puts on the node's series.
func TestLoadAwareMatchesTheAgentsSeries(t *testing.T) {
	n := &controlplane.Node{ID: "node-7f3a", Hostname: "gpu-host-1", CPUCount: 8, MemoryTotalMiB: 1024}
	m, _, err := modelNode(n)
	require.NoError(t, err)

	cfg := collector.AgentConfig{NodeName: n.ID, ServerURL: "http://127.0.0.1:3333", HostMetrics: true}
	doc, err := cfg.YAML()
	require.NoError(t, err)
	require.True(t, strings.Contains(string(doc), "host_name: "+m.Labels[plugins.HostLabel]),
		"collector config stamps host_name=%s, LoadAware looks for %q:\n%s", n.ID, m.Labels[plugins.HostLabel], doc)
}
