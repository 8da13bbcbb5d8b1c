package app

import (
	"fmt"
	"log/slog"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/metering"
)

// attachBilling starts usage metering over the same store and mounts the
// billing routes.
func (a *App) attachBilling(log *slog.Logger) error {
	st, ok := a.srv.Store().(metering.Store)
	if !ok {
		return fmt.Errorf("billing: the %T store has no billing tables yet", a.srv.Store())
	}
	m, err := metering.New(metering.Options{Store: st, Logger: log.With("component", "metering"), Config: metering.Config{LeaseTTL: a.leaseTTL(), Holder: a.holder},
		Registry: a.srv.API().Registry(), Audit: a.srv.Auditor().Record, Querier: a.srv.Querier()})
	if err != nil {
		return err
	}
	a.srv.API().RegisterBilling(m)
	a.meter = m
	return nil
}

// budgetGate is the scheduler's admission gate: budgets' hard stop (the
// metering service is built after the scheduler, before anything runs).
func (a *App) budgetGate(spec *controlplane.TaskSpec) (controlplane.QuotaPolicy, string) {
	if a.meter == nil {
		return "", ""
	}
	return a.meter.Gate(spec)
}
