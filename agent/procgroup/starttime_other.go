//go:build !linux

package procgroup

import "errors"

// StartTime is only available on Linux; elsewhere the pid alone identifies
// an orphan (a weaker check, documented in agent/state).
func StartTime(pid int) (uint64, error) { return 0, errors.ErrUnsupported }

// Running reports whether process pid exists; without /proc the start time
// cannot be checked.
func Running(pid int, _ uint64) bool { return pid > 0 && processExists(pid) }
