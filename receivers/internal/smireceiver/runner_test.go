package smireceiver

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestExecRunner(t *testing.T) {
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
			run := ExecRunner(tt.tools, tt.toolPath, map[string]string{"HF_TEST_VAR": "set"})
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

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		mut     func(*Config)
		wantErr string
	}{
		{name: "default", mut: func(*Config) {}},
		{name: "timeout over interval", mut: func(c *Config) { c.Timeout = 2 * c.CollectionInterval }, wantErr: "overlap"},
		{name: "relative tool path", mut: func(c *Config) { c.ToolPath = "bin/smi" }, wantErr: "absolute"},
		{name: "bad env name", mut: func(c *Config) { c.Env = map[string]string{"A=B": "x"} }, wantErr: "env"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := createDefaultConfig()
			tt.mut(c)
			err := c.Validate()
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.wantErr)
		})
	}
}
