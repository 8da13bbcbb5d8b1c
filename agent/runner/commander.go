package runner

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// Commander runs a vendor CLI and returns its standard output. It is the only
// way the runner touches nvidia-smi, npu-smi or hy-smi, so tests can inject a
// recorder and the agent can point it at simulated CLIs.
type Commander interface {
	Run(ctx context.Context, name string, args ...string) ([]byte, error)
}

// ExecCommander runs commands with os/exec, found on PATH.
type ExecCommander struct{}

// Run executes name with args; a non-zero exit becomes an error carrying the
// command line and its stderr, so the task's failure reason says what broke.
func (ExecCommander) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err,
			strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// CommanderFunc adapts a function to Commander.
type CommanderFunc func(ctx context.Context, name string, args ...string) ([]byte, error)

// Run calls f.
func (f CommanderFunc) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	return f(ctx, name, args...)
}

// EnvCommander runs a command with extra environment ("K=V", added to the
// agent's) and standard input. Isolation programs need both: the CUDA MPS
// control daemon takes its pipe directory from the environment and its
// commands (quit) on standard input.
type EnvCommander interface {
	RunEnv(ctx context.Context, env []string, stdin string, name string, args ...string) ([]byte, error)
}

// RunEnv executes name with env added and stdin fed to it.
func (ExecCommander) RunEnv(ctx context.Context, env []string, stdin string, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err,
			strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
