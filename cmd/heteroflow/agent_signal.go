//go:build !windows

package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// runAgentService runs the agent until SIGINT or SIGTERM (systemd's stop).
func runAgentService(run func(context.Context) error) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return run(ctx)
}
