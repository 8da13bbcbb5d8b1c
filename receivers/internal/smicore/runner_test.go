package smicore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNewExecRunner(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := filepath.Join(dir, "fake-smi")
	require.NoError(t, os.WriteFile(script,
		[]byte("#!/bin/sh\n[ \"$1\" = fail ] && { echo boom >&2; exit 3; }\necho \"$HF_TEST_VAR $*\"\n"), 0o755))

	tests := []struct {
		name     string
		tools    []string
		toolPath string
		call     string
		args     []string
		want     string
		notFound bool
		errText  string
	}{
		{name: "tool_path replaces every vendor name", tools: []string{"xpu-smi", "xpu_smi"}, toolPath: script,
			call: "xpu_smi", args: []string{"-q"}, want: "set -q\n"},
		{name: "other names are not replaced", tools: []string{"xpu-smi"}, toolPath: script,
			call: "no-such-tool-hf", notFound: true},
		{name: "missing tool_path is tool not found", tools: []string{"x"}, toolPath: filepath.Join(dir, "absent"),
			call: "x", notFound: true},
		{name: "failure carries stderr", tools: []string{"x"}, toolPath: script, call: "x", args: []string{"fail"},
			errText: "boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			run := NewExecRunner(tt.tools, tt.toolPath, map[string]string{"HF_TEST_VAR": "set"})
			out, err := run(context.Background(), tt.call, tt.args...)
			switch {
			case tt.notFound:
				require.True(t, errors.Is(err, ErrToolNotFound), "err: %v", err)
			case tt.errText != "":
				require.ErrorContains(t, err, tt.errText)
			default:
				require.NoError(t, err)
				require.Equal(t, tt.want, string(out))
			}
		})
	}
}
