package runner

import (
	"context"
	"errors"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/heteroflow/heteroflow/agent/procgroup"
	"github.com/heteroflow/heteroflow/agent/protocol"
)

// leftoverDrain bounds how long output is read after the whole group was
// killed: a process that escaped the group (setsid) could hold a pipe open.
const leftoverDrain = 5 * time.Second

// stop ends the task once with phase: SIGTERM to the group now, SIGKILL
// after the grace unless it already exited. A container is also stopped
// through the engine, because signals to the client do not reach it.
func (h *Handle) stop(phase, reason string) {
	h.mu.Lock()
	if h.stopPhase != "" {
		h.mu.Unlock()
		return
	}
	h.stopPhase, h.stopWhy = phase, reason
	h.mu.Unlock()
	select {
	case <-h.done:
		return
	default:
	}
	log := h.r.cfg.Logger.With("task", h.spec.TaskID, "attempt", h.spec.Attempt)
	log.Info("stopping task", "phase", phase, "reason", reason)
	if h.container {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), h.r.cfg.Grace+30*time.Second)
			defer cancel()
			grace := strconv.Itoa(int(h.r.cfg.Grace / time.Second))
			if _, err := h.r.cfg.CLI.Run(ctx, h.r.cfg.Engine, "stop", "-t", grace, ContainerName(h.spec.TaskID, h.spec.Attempt)); err != nil {
				log.Warn("container stop failed", "err", err)
			}
		}()
	}
	if err := procgroup.Terminate(h.pid); err != nil {
		log.Warn("SIGTERM to task group failed", "err", err)
	}
	go func() {
		select {
		case <-h.done:
		case <-time.After(h.r.cfg.Grace):
			if err := procgroup.Kill(h.pid); err != nil {
				log.Warn("SIGKILL to task group failed", "err", err)
			}
		}
	}()
}

// shimPoll is how often an adopted task's shim is checked.
const shimPoll = 200 * time.Millisecond

// wait follows the shim until it exits (the shim reaps the task, kills
// what it left in its group and drains its output), then reads the exit
// record, removes the isolation and the working directory and records the
// result.
func (h *Handle) wait() {
	if h.shim != nil {
		_ = h.shim.Wait()
	} else {
		for procgroup.Running(h.shimPID, h.shimStart) {
			time.Sleep(shimPoll)
		}
	}
	if h.timer != nil {
		h.timer.Stop()
	}
	res := Result{StartedAt: h.startedAt, FinishedAt: time.Now()}
	h.mu.Lock()
	phase, why := h.stopPhase, h.stopWhy
	h.mu.Unlock()
	rec, err := ReadExit(h.dir)
	if err != nil {
		// The shim died without recording the exit (killed): its task, if it
		// still runs, must not outlive it unwatched.
		if procgroup.Running(h.pid, h.procStart) {
			_ = procgroup.Kill(h.pid)
		}
		res.Phase, res.Reason = protocol.PhaseFailed, "the task shim ended without recording the task's exit"
		if phase != "" {
			res.Phase, res.Reason = phase, why
		}
	} else {
		code := rec.ExitCode
		res.ExitCode = &code
		res.FinishedAt = rec.FinishedAt
		switch {
		case phase != "":
			res.Phase, res.Reason = phase, why
		case code == 0:
			res.Phase = protocol.PhaseSucceeded
		default:
			res.Phase, res.Reason = protocol.PhaseFailed, "exit code "+strconv.Itoa(code)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	if err := h.prep.Release(ctx); err != nil {
		h.r.cfg.Logger.Error("isolation not fully removed", "task", h.spec.TaskID, "err", err)
		res.Reason = joinReason(res.Reason, "isolation cleanup: "+err.Error())
	}
	cancel()
	if h.workDir != "" {
		if err := collectOutputs(h.workDir, h.dir); err != nil {
			h.r.cfg.Logger.Warn("task outputs not collected", "task", h.spec.TaskID, "err", err)
		}
	}
	h.cleanup()
	h.result = res
	code := -1
	if res.ExitCode != nil {
		code = *res.ExitCode
	}
	h.r.cfg.Logger.Info("task ended", "task", h.spec.TaskID, "attempt", h.spec.Attempt,
		"phase", res.Phase, "exit_code", code)
	close(h.done)
}

// exitCode follows the shell convention: 128+signal for a killed process.
func exitCode(cmd *exec.Cmd, err error) int {
	if cmd.ProcessState == nil {
		return -1
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return -1
	}
	return cmd.ProcessState.ExitCode()
}

func joinReason(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
