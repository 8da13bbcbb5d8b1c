package storeutil

import (
	"strings"

	"github.com/heteroflow/heteroflow/controlplane"
)

// TerminalStatesSQL is controlplane.TerminalTaskStates as an SQL list
// ('succeeded', 'failed', …) for `state IN (…)`: constants, never input.
var TerminalStatesSQL = func() string {
	q := make([]string, len(controlplane.TerminalTaskStates))
	for i, s := range controlplane.TerminalTaskStates {
		q[i] = "'" + string(s) + "'"
	}
	return strings.Join(q, ", ")
}()

// CheckPruneRule refuses a rule without a positive Limit.
func CheckPruneRule(r controlplane.PruneRule) error {
	if r.Limit < 1 {
		return controlplane.Invalidf("prune limit %d must be at least 1", r.Limit)
	}
	return nil
}

// Excess is how many rows above max a kind holding n rows has, at most
// limit; 0 when max is 0 (no bound) or n is within it.
func Excess(n, max int64, limit int) int {
	if max <= 0 || n <= max {
		return 0
	}
	return int(min(n-max, int64(limit)))
}

// TaskBytes is one task's stored log data, a candidate for the byte bound.
type TaskBytes struct {
	TaskID int64
	Bytes  int64
}

// CoverBytes picks candidates, oldest first as given, until together they
// hold at least excess bytes (all of them when they hold less).
func CoverBytes(candidates []TaskBytes, excess int64) []int64 {
	var ids []int64
	for _, c := range candidates {
		if excess <= 0 {
			break
		}
		ids = append(ids, c.TaskID)
		excess -= c.Bytes
	}
	return ids
}
