// Package scheduling runs the scheduler in the live cluster: one
// leader (a lease in the store) turns submitted tasks into placements on
// enrolled nodes with the scheduler framework (scheduler/framework) and the
// live plugins (LoadAware over PromQL, Quota, Gang, Preempt), and keeps the
// allocation ledger in the store balanced against what agents report.
//
// One tick of the loop (loop.go), in this order and why:
//  1. sync nodes into the in-memory cluster (new nodes join, readiness
//     changes; the cluster is rebuilt only when a node's devices change);
//  2. release: ledger rows of attempts that ended (exit, cancel, timeout)
//     are deleted and freed; drained runs of preempted tasks too;
//  3. reconcile: placed tasks on offline nodes, or missing from their
//     agent's heartbeat, are requeued or failed; timeouts are enforced;
//  4. retries: failed/timed-out tasks with retries left go back to queued
//     after an exponential backoff;
//  5. admission: submitted → queued after the quota check (refuse or keep
//     queued, by the quota's policy); a single task's admission is held
//     for this tick's placement and written with its bind in one update
//     (admit_bind.go), or at the tick's end if it is not placed;
//  6. placement: queued tasks by priority then age, skipping those in
//     backoff; bind = ledger rows + run assignment + queued → scheduled in
//     one store transaction; gangs bind all members at once; a task that
//     fits nowhere records "why pending" and may preempt (Preempt plugin);
//  7. defragmentation (defrag_policy.go), with allow_defrag and a policy
//     threshold, once per policy interval: outside the quiet hours, when
//     the fragmentation score reaches the threshold and the hourly move
//     budget allows, restartable Bronze tasks are requeued so that whole
//     devices come free (after placement, so that a tick's new tasks are
//     placed first and the plan sees them).
//
// The API (api_*.go) works on every server: it reads the store, and the
// leader's live view when this server is the leader.
package scheduling
