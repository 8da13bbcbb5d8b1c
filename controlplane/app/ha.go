package app

import (
	"crypto/rand"
	"os"
	"strconv"
	"time"
)

// newHolder names this server in every lease it campaigns for (scheduler,
// workflows, metering, retention, the hub's poller): the host, the process
// and a random part. Host and process alone are not unique: containers
// often run as PID 1 under one hostname, and tests run several servers in
// one process; two servers sharing a holder would both believe they lead.
func newHolder() string {
	host, _ := os.Hostname()
	return host + "/" + strconv.Itoa(os.Getpid()) + "/" + rand.Text()[:8]
}

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
