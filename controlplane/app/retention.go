package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/heteroflow/heteroflow/controlplane/retention"
)

// attachRetention builds the pruner of the audit log, task logs and task
// events (it campaigns for its own lease, so one server prunes). A store
// without retention keeps everything.
func (a *App) attachRetention(log *slog.Logger) error {
	st, ok := a.srv.Store().(retention.Store)
	if !ok {
		log.Warn("retention: the store cannot prune; history is kept forever", "store", a.srv.Store())
		return nil
	}
	r := a.srv.Config().Retention
	p, err := retention.New(retention.Options{Store: st, Logger: log.With("component", "retention"),
		Registry: a.srv.API().Registry(), Config: retention.Config{Interval: time.Duration(r.Interval), Holder: a.holder,
			AuditMaxAge: time.Duration(r.AuditMaxAge), AuditMaxRows: r.AuditMaxRows,
			TaskLogMaxAge: time.Duration(r.TaskLogMaxAge), TaskLogMaxBytes: r.TaskLogMaxBytes,
			TaskEventMaxAge: time.Duration(r.TaskEventMaxAge), TaskEventMaxRows: r.TaskEventMaxRows}})
	if err != nil {
		return err
	}
	a.prune = p
	return nil
}

// startRetention runs the pruner among the background loops.
func (a *App) startRetention(ctx context.Context) {
	if a.prune == nil {
		return
	}
	a.loops.Add(1)
	go func() { defer a.loops.Done(); a.prune.Run(ctx) }()
}
