package state

import (
	"context"
	"time"

	"github.com/heteroflow/heteroflow/agent/procgroup"
)

// Identify returns the start time to record for pid (0 where unsupported).
func Identify(pid int) uint64 {
	st, err := procgroup.StartTime(pid)
	if err != nil {
		return 0
	}
	return st
}

// StillRunning reports whether r's process group still runs and its leader
// is the same process that was recorded (not a reused pid). A leader that
// is gone while other members of the group still run counts as running.
func StillRunning(r Record) bool {
	if !procgroup.Alive(r.PGID) {
		return false
	}
	if r.ProcStart == 0 {
		return true
	}
	st, err := procgroup.StartTime(r.PID)
	if err != nil {
		// Leader gone, group alive: its children are still ours.
		return true
	}
	return st == r.ProcStart
}

// Kill stops r's whole process group: SIGTERM, then SIGKILL after grace.
func Kill(ctx context.Context, r Record, grace time.Duration) error {
	if err := procgroup.Terminate(r.PGID); err != nil {
		return err
	}
	deadline := time.Now().Add(grace)
	for procgroup.Alive(r.PGID) && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	if procgroup.Alive(r.PGID) {
		return procgroup.Kill(r.PGID)
	}
	return nil
}

// Orphan is a record left by a previous agent, with what was done about it.
type Orphan struct {
	Record
	Adopted    bool // still running under its shim: the new agent follows it
	WasRunning bool // not adopted, and its process group was still running (killed)
	KillErr    error
}

// Reconcile handles every record left from a previous run. adopt (may be
// nil) is asked first: a record it takes stays, and the task keeps running
// under the new agent. Any other task still running is killed (nobody
// would watch or report it) and its record removed. The caller reports
// each orphan that was not adopted to the server.
func (s *Store) Reconcile(ctx context.Context, grace time.Duration, adopt func(Record) bool) ([]Orphan, error) {
	var out []Orphan
	for _, r := range s.List() {
		if adopt != nil && adopt(r) {
			out = append(out, Orphan{Record: r, Adopted: true})
			continue
		}
		o := Orphan{Record: r, WasRunning: StillRunning(r)}
		if o.WasRunning {
			o.KillErr = Kill(ctx, r, grace)
		}
		if err := s.Remove(r.TaskID, r.Attempt); err != nil {
			return out, err
		}
		out = append(out, o)
	}
	return out, nil
}
