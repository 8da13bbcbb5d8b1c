// Package daemon is the node agent's main loop (`heteroflow agent`): enroll
// once with a bootstrap token, detect the node's accelerators through the
// vendor parsers, run the embedded collector, heartbeat, long-poll for
// assignments, run tasks with agent/runner, ship their logs, and deliver
// every status change through the on-disk outbox. See ../README.md.
package daemon
