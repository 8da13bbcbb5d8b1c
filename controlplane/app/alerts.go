package app

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/prometheus/storage"

	"github.com/heteroflow/heteroflow/alerts"
	"github.com/heteroflow/heteroflow/alerts/alertapi"
	"github.com/heteroflow/heteroflow/alerts/notify"
	"github.com/heteroflow/heteroflow/controlplane"
)

// attachAlerts builds the alert engine over the server's querier and
// metrics store, exports the task series its rules read, and runs it on
// the scheduler leader only.
func (a *App) attachAlerts(log *slog.Logger) error {
	st, ok := a.srv.Store().(alerts.Store)
	if !ok {
		return fmt.Errorf("alerts: the %T store has no alert tables", a.srv.Store())
	}
	tasks, ok := a.srv.Store().(alerts.TaskLister)
	if !ok {
		return fmt.Errorf("alerts: the %T store cannot list tasks", a.srv.Store())
	}
	cfg := a.srv.Config().Alerts
	reg := a.srv.API().Registry()
	if err := reg.Register(&alerts.TaskMetrics{Store: tasks, Logger: log}); err != nil {
		return err
	}
	var q storage.Queryable
	if db := a.srv.Metrics().DB(); db != nil {
		q = db // remote mode has no local ALERTS_FOR_STATE to restore from
	}
	worker := &notify.Worker{Store: st, Logger: log.With("component", "notify"), Leader: a.sched.Leader, ExternalURL: cfg.ExternalURL}
	eng, err := alerts.New(alerts.Options{Store: st, Querier: a.srv.Querier(), Appendable: a.srv.Metrics().Appendable(),
		Queryable: q, Interval: time.Duration(cfg.EvaluationInterval), RulesDir: cfg.RulesDir, ExternalURL: cfg.ExternalURL,
		Logger: log.With("component", "alerts"), Registerer: reg, Leader: a.sched.Leader,
		Audit: func(e *controlplane.AuditEntry) { a.srv.Auditor().Record(e) }, Resend: worker.Resend, Queued: worker.Wake})
	if err != nil {
		return err
	}
	a.alerts, a.notify = eng, worker
	alertapi.Mount(a.srv.API(), st, eng, worker)
	return nil
}
