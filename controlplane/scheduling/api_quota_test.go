package scheduling

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
)

// TestQuotaChangesApplyAtOnce: after PUT or DELETE answers, the scheduler on
// this server already enforces the new quota, not the one before it.
func TestQuotaChangesApplyAtOnce(t *testing.T) {
	h := newHarness(t, Config{})
	q := &controlplane.Quota{Tenant: "lab", Devices: 4}
	require.NoError(t, h.db.CreateQuota(h.ctx, q))
	h.svc.reloadQuotas(h.ctx)
	id := strconv.FormatInt(q.ID, 10)
	mux := http.NewServeMux()
	mux.HandleFunc("PUT /quotas/{id}", h.svc.putQuota)
	mux.HandleFunc("DELETE /quotas/{id}", h.svc.deleteQuota)
	quotas := func() []*controlplane.Quota {
		h.svc.mu.Lock()
		defer h.svc.mu.Unlock()
		return h.svc.quotas
	}

	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodPut, "/quotas/"+id, strings.NewReader(`{"tenant":"lab","devices":8}`)))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Len(t, quotas(), 1)
	require.Equal(t, int64(8), quotas()[0].Devices)

	rec = httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodDelete, "/quotas/"+id, nil))
	require.Equal(t, http.StatusNoContent, rec.Code, rec.Body.String())
	require.Empty(t, quotas())
}
