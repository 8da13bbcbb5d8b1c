package smireceiver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
)

// Runner runs one CLI invocation and returns its standard output.
type Runner = func(ctx context.Context, name string, args ...string) ([]byte, error)

// ErrToolNotFound means the vendor CLI is not installed (not on PATH, or
// tool_path does not exist): the vendor is absent on this node. ExecRunner's
// error also wraps the bound smi sentinel (see Binding.ToolNotFound).
var ErrToolNotFound = errors.New("vendor CLI not found")

// maxStderr bounds how much of a failing CLI's stderr goes into the error.
const maxStderr = 512

// ExecRunner runs the real CLI. Invocations of any of tools (the vendor's CLI
// names) go to toolPath when it is set; env is added to the environment.
func ExecRunner(tools []string, toolPath string, env map[string]string) Runner {
	// The tools print English tables; a localised environment would change
	// decimal separators and labels. Configured env comes last and wins.
	environ := append(os.Environ(), "LC_ALL=C", "LANG=C")
	for k, v := range env {
		environ = append(environ, k+"="+v)
	}
	return func(ctx context.Context, name string, args ...string) ([]byte, error) {
		path := name
		if toolPath != "" && slices.Contains(tools, name) {
			path = toolPath
		}
		resolved, err := exec.LookPath(path)
		if err != nil {
			if sentinel := notFoundSentinel(); sentinel != ErrToolNotFound {
				return nil, fmt.Errorf("%w (%w): %s: %w", sentinel, ErrToolNotFound, path, err)
			}
			return nil, fmt.Errorf("%w: %s: %w", ErrToolNotFound, path, err)
		}
		cmd := exec.CommandContext(ctx, resolved, args...)
		cmd.Env = environ
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			msg := strings.TrimSpace(stderr.String())
			if len(msg) > maxStderr {
				msg = msg[:maxStderr] + "…"
			}
			if msg == "" {
				msg = strings.TrimSpace(firstLine(stdout.String()))
			}
			return stdout.Bytes(), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, msg)
		}
		return stdout.Bytes(), nil
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
