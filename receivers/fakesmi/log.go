package fakesmi

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"
)

// Invocation is one line of the invocation log (JSON lines).
type Invocation struct {
	Time  time.Time         `json:"time"`
	Tool  string            `json:"tool"`
	Args  []string          `json:"args"`
	Env   map[string]string `json:"env,omitempty"`   // device-selection and isolation variables only
	Stdin string            `json:"stdin,omitempty"` // commands read from standard input
}

// loggedEnv keeps the variables that select devices or set isolation.
func loggedEnv(env []string) map[string]string {
	out := map[string]string{}
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if ok && (strings.HasPrefix(k, "CUDA_") || strings.HasSuffix(k, "_VISIBLE_DEVICES") || k == "LD_PRELOAD") {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// envValue is the last value of key in env, or "".
func envValue(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}

// appendLog records one invocation; O_APPEND keeps concurrent writers'
// lines whole.
func appendLog(path string, inv Invocation, now time.Time) error {
	if path == "" {
		return nil
	}
	inv.Time = now.UTC()
	b, err := json.Marshal(inv)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("fakesmi log: %w", err)
	}
	defer f.Close()
	_, err = f.Write(append(b, '\n'))
	return err
}

// ReadLog returns every recorded invocation.
func ReadLog(path string) ([]Invocation, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("fakesmi log: %w", err)
	}
	var out []Invocation
	for _, line := range splitLines(b) {
		var inv Invocation
		if err := json.Unmarshal(line, &inv); err != nil {
			return nil, fmt.Errorf("fakesmi log: %w", err)
		}
		out = append(out, inv)
	}
	return out, nil
}

func splitLines(b []byte) [][]byte {
	var out [][]byte
	start := 0
	for i, c := range b {
		if c == '\n' {
			if i > start {
				out = append(out, b[start:i])
			}
			start = i + 1
		}
	}
	if start < len(b) {
		out = append(out, b[start:])
	}
	return out
}
