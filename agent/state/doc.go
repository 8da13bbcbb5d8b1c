// Package state is the agent's local record of the tasks it runs: task id,
// attempt, pid/pgid and the process start time. It is rewritten atomically
// on every change, so after an agent crash or restart the new agent knows
// which processes were its own and can kill them (see Reconcile) instead of
// leaving work the server's ledger no longer tracks running behind its back.
//
// Why kill and not adopt: a task's stdout/stderr are pipes into the agent;
// once the agent that held them is gone the task cannot be streamed or
// reaped (its exit code is lost), so the honest report is "killed on agent
// restart" and the server decides about a retry. The pid is only trusted
// together with its start time (Linux), so a reused pid is never killed.
package state
