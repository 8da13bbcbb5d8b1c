package app

import (
	"fmt"
	"log/slog"

	"github.com/heteroflow/heteroflow/controlplane/metering"
)

// attachBilling starts usage metering over the same store and mounts the
// billing routes.
func (a *App) attachBilling(log *slog.Logger) error {
	st, ok := a.srv.Store().(metering.Store)
	if !ok {
		return fmt.Errorf("billing: the %T store has no billing tables yet", a.srv.Store())
	}
	m, err := metering.New(metering.Options{Store: st, Logger: log.With("component", "metering"),
		Registry: a.srv.API().Registry(), Audit: a.srv.Auditor().Record})
	if err != nil {
		return err
	}
	a.srv.API().RegisterBilling(m)
	a.meter = m
	return nil
}
