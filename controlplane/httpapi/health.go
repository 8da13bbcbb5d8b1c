package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"time"
)

// health pings the store: 200 "ok", or 503 "degraded" with the reason so
// load balancers take the server out while its database is unreachable.
func (a *API) health(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	h := HealthJSON{Status: "ok", Store: "ok", Version: a.opts.Version}
	code := http.StatusOK
	if err := a.store.Ping(ctx); err != nil {
		h.Status, h.Store, code = "degraded", err.Error(), http.StatusServiceUnavailable
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(h)
}
