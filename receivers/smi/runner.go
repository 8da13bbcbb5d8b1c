package smi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// Runner runs one CLI invocation and returns its standard output. A tool
// that is not installed must yield an error wrapping ErrToolNotFound; a
// non-zero exit an error (with whatever stdout was printed).
type Runner func(ctx context.Context, name string, args ...string) ([]byte, error)

// maxStderr bounds how much of a failing tool's stderr goes into an error.
const maxStderr = 512

// ExecRunner runs real binaries found on PATH (or by absolute path).
func ExecRunner(ctx context.Context, name string, args ...string) ([]byte, error) {
	path, err := exec.LookPath(name)
	if err != nil {
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s", ErrToolNotFound, name)
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	cmd := exec.CommandContext(ctx, path, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// The tools print English tables; a localised environment would change
	// decimal separators and labels.
	cmd.Env = append(os.Environ(), "LC_ALL=C", "LANG=C")
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = strings.TrimSpace(stdout.String())
		}
		if len(msg) > maxStderr {
			msg = msg[:maxStderr] + "…"
		}
		return stdout.Bytes(), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, msg)
	}
	return stdout.Bytes(), nil
}
