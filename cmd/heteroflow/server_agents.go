package main

import (
	"context"
	"time"

	"github.com/heteroflow/heteroflow/controlplane/agentapi"
	"github.com/heteroflow/heteroflow/controlplane/server"
	"github.com/heteroflow/heteroflow/deploy"
)

// runServer runs the control plane with the node-agent API attached
// (enrollment, heartbeats, assignments, node management, the agent binary
// download and the deploy script) until ctx ends.
func runServer(ctx context.Context, cfg server.Config, o server.Options) error {
	s, err := server.New(ctx, cfg, o)
	if err != nil {
		return err
	}
	svc, err := agentapi.Attach(ctx, s.API(), s.Store(), agentapi.AttachOptions{Logger: o.Logger,
		DeployScript: deploy.AgentScript})
	if err != nil {
		_ = s.Shutdown(context.Background())
		return err
	}
	sched, err := attachScheduling(s, svc, o.Logger)
	if err != nil {
		_ = s.Shutdown(context.Background())
		return err
	}
	if err := s.Start(); err != nil {
		_ = s.Shutdown(context.Background())
		return err
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	schedDone := make(chan struct{})
	go func() { svc.Run(runCtx); close(done) }()
	go func() { sched.Run(runCtx); close(schedDone) }()
	<-ctx.Done()
	stop()
	<-done
	<-schedDone
	sctx, cancel := context.WithTimeout(context.Background(), time.Duration(cfg.ShutdownTimeout))
	defer cancel()
	return s.Shutdown(sctx)
}
