package app

import "time"

// leaseTTL is the lease of every leader-only loop (scheduler — with alert
// evaluation and notifications, which follow it —, workflows, metering):
// ha.lease_ttl, so a follower takes over within it of the leader's death.
func (a *App) leaseTTL() time.Duration { return time.Duration(a.srv.Config().HA.LeaseTTL) }

// pollRecheck is how often an agent's waiting long-poll re-reads the
// store on an HA server, where the scheduler leader writing its
// assignment may be another process (0 on a single server: the
// in-process poke suffices).
func (a *App) pollRecheck() time.Duration {
	if a.srv.Config().HA.Enabled {
		return 500 * time.Millisecond
	}
	return 0
}
