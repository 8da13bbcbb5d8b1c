// Package state is the agent's local record of the tasks it runs: task id,
// attempt, pid/pgid and the process start time. It is rewritten atomically
// on every change, so after an agent crash or restart the new agent knows
// which processes were its own and can kill them (see Reconcile) instead of
// leaving work the server's ledger no longer tracks running behind its back.
//
// Orphan policy: a task outlives its agent, because its shim (agent/runner)
// owns the task's output files and records its exit. A restarted agent
// adopts a task whose shim still runs (same pid and start time: a reused
// pid is never mistaken for it) and whose log files are intact: it keeps
// shipping the logs, applies the rest of the timeout and reports the real
// exit code. A task whose shim ended while the agent was away is reported
// from the shim's exit record. Anything else (no shim, shim gone without a
// record, logs missing) is killed, whole process group, and reported as
// failed with the reason; the server decides about a retry.
package state
