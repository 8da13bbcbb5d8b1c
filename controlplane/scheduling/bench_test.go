package scheduling

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// BenchmarkTickPlace measures one tick that admits and places a task
// (ledger + assignment + transition in SQLite) on a 20-node cluster.
func BenchmarkTickPlace(b *testing.B) {
	// b, not a bare testing.T, so that the store's cleanup runs (a
	// PostgreSQL schema with HETEROFLOW_TEST_STORE=postgres).
	h := newHarness(b, Config{})
	for i := 0; i < 20; i++ {
		h.addNode(fmt.Sprintf("n%02d", i), inventory.VendorAMD, "MI210", 8, 65536)
	}
	require.NoError(b, h.svc.Tick(h.ctx, true))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h.submit(controlplane.TaskSpec{Name: "b", DeviceCount: 1, ComputePercent: 10, QoS: controlplane.QoSBronze})
		require.NoError(b, h.svc.Tick(h.ctx, false)) // admit
		require.NoError(b, h.svc.Tick(h.ctx, false)) // place
		if i%1000 == 999 {
			b.StopTimer()
			for _, a := range h.nodes {
				a.step()
			}
			b.StartTimer()
		}
	}
}
