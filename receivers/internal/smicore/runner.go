package smicore

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
)

// Runner runs one CLI invocation and returns its standard output. A tool
// that is not installed must yield an error wrapping ErrToolNotFound; a
// non-zero exit an error (with whatever stdout was printed).
type Runner = func(ctx context.Context, name string, args ...string) ([]byte, error)

// ExecRunner runs real binaries found on PATH (or by absolute path).
var ExecRunner = NewExecRunner(nil, "", nil)

// maxStderr bounds how much of a failing CLI's stderr goes into the error.
const maxStderr = 512

// NewExecRunner runs the real CLI. Invocations of any of tools (the vendor's
// CLI names) go to toolPath when it is set; env is added to the environment.
func NewExecRunner(tools []string, toolPath string, env map[string]string) Runner {
	return func(ctx context.Context, name string, args ...string) ([]byte, error) {
		// The tools print English tables; a localised environment would change
		// decimal separators and labels. Configured env comes last and wins.
		// Read at call time: the agent and tests change the environment.
		environ := append(os.Environ(), "LC_ALL=C", "LANG=C")
		for k, v := range env {
			environ = append(environ, k+"="+v)
		}
		path := name
		if toolPath != "" && slices.Contains(tools, name) {
			path = toolPath
		}
		resolved, err := exec.LookPath(path)
		if err != nil {
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
