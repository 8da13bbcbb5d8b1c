package app

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/heteroflow/heteroflow/controlplane/hub"
	"github.com/heteroflow/heteroflow/controlplane/hub/hubapi"
)

// attachHub makes the server a multi-cluster hub when hub.enabled: the
// member routes, tasks placed on members, and the cross-cluster PromQL
// in place of this server's own /prometheus query endpoints.
func (a *App) attachHub(log *slog.Logger, version string) error {
	cfg := a.srv.Config().Hub
	if !cfg.Enabled {
		return nil
	}
	st, ok := a.srv.Store().(hub.Store)
	if !ok {
		return fmt.Errorf("hub: the %T store has no cluster tables yet", a.srv.Store())
	}
	sealer, err := a.srv.Sealer()
	if err != nil {
		return err
	}
	h, err := hub.New(hub.Options{Store: st, Sealer: sealer, Version: version, Holder: a.holder,
		Logger: log.With("component", "hub"), Audit: a.srv.Auditor().Record,
		Config: hub.Config{PollInterval: time.Duration(cfg.PollInterval), Timeout: time.Duration(cfg.Timeout), LeaseTTL: a.leaseTTL()}})
	if err != nil {
		return err
	}
	hubapi.Mount(a.srv.API(), h)
	a.srv.SetFederatedQuery(h.PromQLHandler())
	a.hub = h
	return nil
}

// startHub runs the hub's poller (it campaigns for its lease).
func (a *App) startHub(ctx context.Context) {
	if a.hub == nil {
		return
	}
	a.loops.Add(1)
	go func() { defer a.loops.Done(); a.hub.Run(ctx) }()
}
