// Package retention prunes the history that would otherwise grow forever:
// the audit log, task logs and task events. Each kind has an age bound and
// a size bound (rows, or bytes of log data); a pass removes, in small
// batches, what is past either bound, oldest first.
//
//	every Interval, on the server holding lease "retention":
//	  audit log    ─ PruneAudit      (older than AuditMaxAge, beyond AuditMaxRows)
//	  task logs    ─ PruneTaskLogs   (tasks finished before TaskLogMaxAge, beyond TaskLogMaxBytes)
//	  task events  ─ PruneTaskEvents (tasks finished before TaskEventMaxAge, beyond TaskEventMaxRows)
//	  ─▶ heteroflow_retention_pruned_rows_total{kind}, heteroflow_retention_pruned_bytes_total{kind}
//
// What live work still needs is never removed (the store's contract,
// controlplane.RetentionStore): the logs, events and audit entries of a
// task that is not terminal or that an open alert names, and the audit
// entries of an open alert. A needed row still counts towards a size bound,
// so a kind can stay above its bound while its rows are needed.
package retention
