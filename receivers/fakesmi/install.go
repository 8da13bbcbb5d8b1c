package fakesmi

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/heteroflow/heteroflow/receivers/vendorcatalog"
)

// ToolsFor lists the tool names of a vendor.
func ToolsFor(vendor string) []string {
	var out []string
	for _, t := range Tools {
		if vendorcatalog.ToolVendor(t) == vendor {
			out = append(out, t)
		}
	}
	return out
}

// Install writes one executable wrapper per tool of the profile's vendor
// into dir. Each runs `<binary> fakesmi --tool <name> "$@"` with the
// profile, state and log paths in its environment, so putting dir first on
// PATH makes the node look like it has that vendor's devices.
func Install(dir, binary, profilePath, statePath, logPath string) ([]string, error) {
	p, err := LoadProfile(profilePath)
	if err != nil {
		return nil, err
	}
	abs := func(s string) (string, error) {
		if s == "" {
			return "", nil
		}
		return filepath.Abs(s)
	}
	var paths [3]string
	for i, s := range []string{profilePath, statePath, logPath} {
		if paths[i], err = abs(s); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("fakesmi install: %w", err)
	}
	var written []string
	for _, tool := range ToolsFor(p.Vendor) {
		script := fmt.Sprintf("#!/bin/sh\n# Simulated %s written by `heteroflow fakesmi install` (tests and make run only).\n%s=%s %s=%s %s=%s exec %s fakesmi --tool %s \"$@\"\n",
			tool, EnvProfile, shellQuote(paths[0]), EnvState, shellQuote(paths[1]), EnvLog, shellQuote(paths[2]), shellQuote(binary), tool)
		path := filepath.Join(dir, tool)
		if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
			return nil, fmt.Errorf("fakesmi install: %w", err)
		}
		written = append(written, path)
	}
	return written, nil
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
