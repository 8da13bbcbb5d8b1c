package scheduling

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
)

// TestQuotaChangesApplyAtOnce: when UpdateQuota or DeleteQuota returns, the
// scheduler on this server already enforces the new quota, not the one
// before it.
func TestQuotaChangesApplyAtOnce(t *testing.T) {
	h := newHarness(t, Config{})
	q := &controlplane.Quota{Tenant: "lab", Devices: 4}
	require.NoError(t, h.db.CreateQuota(h.ctx, q))
	h.svc.reloadQuotas(h.ctx)
	quotas := func() []*controlplane.Quota {
		h.svc.mu.Lock()
		defer h.svc.mu.Unlock()
		return h.svc.quotas
	}

	got, err := h.svc.UpdateQuota(h.ctx, q.ID, QuotaView{Tenant: "lab", Devices: 8})
	require.NoError(t, err)
	require.Equal(t, int64(8), got.Devices)
	require.Len(t, quotas(), 1)
	require.Equal(t, int64(8), quotas()[0].Devices)

	require.NoError(t, h.svc.DeleteQuota(h.ctx, q.ID))
	require.Empty(t, quotas())
}
