package fakesmi

import (
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// Invocation is one line of the invocation log (JSON lines).
type Invocation struct {
	Time time.Time `json:"time"`
	Tool string    `json:"tool"`
	Args []string  `json:"args"`
}

// appendLog records one invocation; O_APPEND keeps concurrent writers'
// lines whole.
func appendLog(path, tool string, args []string, now time.Time) error {
	if path == "" {
		return nil
	}
	b, err := json.Marshal(Invocation{Time: now.UTC(), Tool: tool, Args: args})
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
