//go:build !linux

package procgroup

import "errors"

// StartTime is only available on Linux; elsewhere the pid alone identifies
// an orphan (a weaker check, documented in agent/state).
func StartTime(pid int) (uint64, error) { return 0, errors.ErrUnsupported }
