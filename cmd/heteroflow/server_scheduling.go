package main

import (
	"fmt"
	"log/slog"

	"github.com/heteroflow/heteroflow/controlplane/agentapi"
	"github.com/heteroflow/heteroflow/controlplane/scheduling"
	"github.com/heteroflow/heteroflow/controlplane/server"
)

// attachScheduling mounts the scheduler's API (plugins, quotas, why
// pending, slices, summary, defragmentation) and returns the service whose
// Run campaigns for the leader lease and runs the loop. LoadAware reads live
// utilisation through the server's PromQL querier (embedded TSDB or the
// remote store).
func attachScheduling(s *server.Server, agents *agentapi.Service, log *slog.Logger) (*scheduling.Service, error) {
	st, ok := s.Store().(scheduling.Store)
	if !ok {
		return nil, fmt.Errorf("scheduling: the %T store has no scheduling tables yet", s.Store())
	}
	svc, err := scheduling.New(scheduling.Options{Store: st, Logger: log, Registry: s.API().Registry(), Notifier: agents,
		Sampler: s.Querier()})
	if err != nil {
		return nil, err
	}
	svc.Mount(s.API())
	return svc, nil
}
