// Package chaos is the soak-and-chaos harness (`heteroflow chaos`, and a
// short version in `go test`): a real server process on SQLite, hundreds of
// simulated agents in this process speaking the real agent protocol, a few
// real agent processes (agent/daemon, real tasks through the sandbox and
// shim) in network namespaces the harness creates, and a fault schedule:
// kill -9 of the server (the scheduler's leader) and of agents, and
// network partitions (veth links taken down; simulated agents lose their
// connection). It ends with an exact accounting:
//
//   - every submitted task exists and is terminal, each failure with a reason;
//   - no task ran twice at once (simulated agents record every run interval);
//   - the allocation ledger equals the sum of live allocations (none left
//     once every task is terminal);
//   - no panic in any server or agent process;
//   - no goroutine or file-descriptor leak in the harness process.
//
// Simulated agents model the agent's durability contract: their outbox and
// handled assignment ids survive a "kill -9", their in-flight tasks keep
// running (as under the task shim) and are reported by the restarted agent.
package chaos
