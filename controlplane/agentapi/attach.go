package agentapi

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/auth"
	"github.com/heteroflow/heteroflow/controlplane/httpapi"
	"github.com/heteroflow/heteroflow/controlplane/pki"
)

// AttachOptions tune Attach.
type AttachOptions struct {
	Logger       *slog.Logger
	OfflineAfter time.Duration
	// Binary is served at GET /downloads/heteroflow-<os>-<arch> for the
	// deploy script (default: this process's own executable).
	Binary string
	// DeployScript is served at GET /deploy-agent-all-in-one.sh.
	DeployScript []byte
	// CA signs agent client certificates at enrollment (mTLS); nil = off.
	CA *pki.CA
	// SigningKey is the server's JWT signing key; nil loads (or creates)
	// the key kept in the store, as stand-alone tests do.
	SigningKey []byte
	// Recheck makes a waiting long-poll re-read the store this often (0 =
	// only when this process's scheduler pokes it). HA servers set it: the
	// leader that writes an assignment may be another process.
	Recheck time.Duration
}

// Attach mounts the agent API on a server's API before it starts and
// returns the service, whose Run must then be started beside the server.
// The store must implement NodeStore (both controlplane/sqlite and
// controlplane/postgres do). The service mints agent keys through its own auth.Service
// over the same store and signing key: key creation is stateless, and the
// only cache it touches (revocation of a key from a failed enrollment) is
// of keys the API never saw.
func Attach(ctx context.Context, api *httpapi.API, store controlplane.Store, o AttachOptions) (*Service, error) {
	ns, ok := store.(Store)
	if !ok {
		return nil, fmt.Errorf("agentapi: the %T store does not implement controlplane.NodeStore", store)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	key := o.SigningKey
	if key == nil {
		var err error
		if key, err = auth.LoadOrCreateSigningKey(ctx, store); err != nil {
			return nil, err
		}
	}
	cfg := auth.DefaultConfig()
	cfg.SigningKey = key
	as, err := auth.New(store, cfg, o.Logger)
	if err != nil {
		return nil, err
	}
	var reg prometheus.Registerer = api.Registry()
	svc, err := New(Options{Store: ns, Auth: as, Logger: o.Logger, Registry: reg, OfflineAfter: o.OfflineAfter, CA: o.CA,
		Recheck: o.Recheck})
	if err != nil {
		return nil, err
	}
	svc.Mount(api)
	bin := o.Binary
	if bin == "" {
		if bin, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("agentapi: own binary: %w", err)
		}
	}
	api.Handle(http.MethodGet, "/downloads/{file}", httpapi.Public, downloads(bin, o.Logger))
	api.Document(http.MethodGet, "/downloads/{file}", httpapi.Doc{ID: "download-binary", Summary: "The heteroflow binary for an agent: heteroflow-<os>-<arch>",
		Tags: []string{"agents"}, ResponseType: "application/octet-stream", Errors: []int{404}})
	if len(o.DeployScript) > 0 {
		api.Handle(http.MethodGet, "/deploy-agent-all-in-one.sh", httpapi.Public, http.HandlerFunc(
			func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "text/x-shellscript; charset=utf-8")
				_, _ = w.Write(o.DeployScript)
			}))
		api.Document(http.MethodGet, "/deploy-agent-all-in-one.sh", httpapi.Doc{ID: "deploy-script", Summary: "The one-command agent deploy script",
			Tags: []string{"agents"}, ResponseType: "text/x-shellscript"})
	}
	return svc, nil
}

// downloads serves the server's own binary as heteroflow-<GOOS>-<GOARCH>
// (only the platform it was built for: one binary, no cross-build store).
func downloads(bin string, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		want := "heteroflow-" + goos + "-" + goarch
		if r.PathValue("file") != want && lastSegment(r.URL.Path) != want {
			httpapi.WriteError(w, r, log, fmt.Errorf("%w: only %s is available from this server", controlplane.ErrNotFound, want))
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", "attachment; filename="+want)
		http.ServeFile(w, r, bin)
	})
}

func lastSegment(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return p[i+1:]
		}
	}
	return p
}
