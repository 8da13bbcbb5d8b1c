package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
)

// Health endpoints, all public:
//
//	GET /health/live   liveness: the process serves HTTP (always 200).
//	GET /health/ready  readiness: the store answers a read and takes a
//	                   write; 503 "degraded" otherwise.
//	GET /health        readiness, kept for load balancers and scripts.
//
// Anonymous callers learn only "ok" or "degraded"; admins and operators
// (with a bearer credential) also see each check and the version. The
// store is probed at most once per healthCacheTTL however often the
// endpoints are polled, so an anonymous flood cannot turn into writes.

// healthCacheTTL bounds how often the store is probed.
const healthCacheTTL = 2 * time.Second

// healthProbeKey is the setting the readiness write check rewrites.
const healthProbeKey = "health.write_probe"

type healthState struct {
	mu     sync.Mutex
	at     time.Time
	checks map[string]string
}

// readiness returns the store checks, probing at most once per TTL.
func (a *API) readiness(ctx context.Context) map[string]string {
	h := &a.healthState
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.checks != nil && time.Since(h.at) < healthCacheTTL {
		return h.checks
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	checks := map[string]string{"store_read": "ok", "store_write": "ok"}
	if err := a.store.Ping(ctx); err != nil {
		checks["store_read"] = err.Error()
	}
	if err := a.store.PutSetting(ctx, healthProbeKey, strconv.FormatInt(a.now().Unix(), 10)); err != nil {
		checks["store_write"] = err.Error()
	}
	h.checks, h.at = checks, time.Now()
	return checks
}

func (a *API) healthReady(w http.ResponseWriter, r *http.Request) {
	checks := a.readiness(r.Context())
	h := HealthJSON{Status: "ok"}
	for _, v := range checks {
		if v != "ok" {
			h.Status = "degraded"
		}
	}
	if p := PrincipalFrom(r.Context()); p != nil && (p.Role == controlplane.RoleAdmin || p.Role == controlplane.RoleOperator) {
		h.Checks, h.Version = checks, a.opts.Version
	}
	code := http.StatusOK
	if h.Status != "ok" {
		code = http.StatusServiceUnavailable
	}
	writeHealth(w, code, h)
}

func (a *API) healthLive(w http.ResponseWriter, _ *http.Request) {
	writeHealth(w, http.StatusOK, HealthJSON{Status: "ok"})
}

func writeHealth(w http.ResponseWriter, code int, h HealthJSON) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(h)
}
