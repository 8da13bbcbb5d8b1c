// Package alerts is HeteroFlow's alert engine: Prometheus alerting and
// recording rules (github.com/prometheus/prometheus/rules, so `for`,
// `keep_firing_for`, $labels/$value templates and resend behave exactly as
// in Prometheus) evaluated over the one PromQL Querier, on the scheduler
// leader only.
//
//	rules/*.yml (embedded)  ─┐
//	rules directory (config) ├─ params applied ─→ rules.Group ─ Eval(ts) ─→ ALERTS, ALERTS_FOR_STATE,
//	custom rules (store)    ─┘                                              recording series → TSDB
//	                                                   │ firing / cleared
//	                                                   ▼
//	                store: instance ACTIVE → ACKNOWLEDGED → RESOLVED + outbox rows (one transaction)
//	                                                   │
//	                notify.Worker: outbox → Alertmanager v2, webhook, DingTalk, WeCom, Feishu, e-mail
//
// Evaluation is driven by the timestamp passed to Engine.EvalAt, so tests
// step a clock. Prometheus has no acknowledgement: ACKNOWLEDGED is stored
// beside the evaluator's state and never changes what it computes; a
// resolved instance never reopens, a new firing opens a new instance.
//
// `for` progress survives a restart or a leader change as in Prometheus:
// the first evaluation after taking over is followed by RestoreForState
// over ALERTS_FOR_STATE in the TSDB, and instances are only resolved by the
// engine once their rule has been restored and evaluated cleanly.
package alerts
