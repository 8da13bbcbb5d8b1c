//go:build windows

package main

import (
	"context"
	"os"
	"os/signal"

	"golang.org/x/sys/windows/svc"
)

// agentServiceName is the Windows service name deploy/README.md installs
// the agent under (sc.exe create heteroflow-agent …).
const agentServiceName = "heteroflow-agent"

// runAgentService runs the agent as a Windows service when the service
// control manager started it (it must answer Stop and Shutdown, or Windows
// reports error 1053), and as a console program on Ctrl-C otherwise.
func runAgentService(run func(context.Context) error) error {
	isService, err := svc.IsWindowsService()
	if err != nil || !isService {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
		defer stop()
		return run(ctx)
	}
	h := &agentService{run: run}
	if err := svc.Run(agentServiceName, h); err != nil {
		return err
	}
	return h.err
}

type agentService struct {
	run func(context.Context) error
	err error
}

func (s *agentService) Execute(_ []string, req <-chan svc.ChangeRequest, status chan<- svc.Status) (bool, uint32) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.run(ctx) }()
	status <- svc.Status{State: svc.Running, Accepts: svc.AcceptStop | svc.AcceptShutdown}
	for {
		select {
		case s.err = <-done:
			status <- svc.Status{State: svc.Stopped}
			if s.err != nil {
				return true, 1
			}
			return false, 0
		case c := <-req:
			switch c.Cmd {
			case svc.Interrogate:
				status <- c.CurrentStatus
			case svc.Stop, svc.Shutdown:
				status <- svc.Status{State: svc.StopPending}
				cancel()
			}
		}
	}
}
