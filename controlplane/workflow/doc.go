// Package workflow runs DAGs of tasks: a workflow spec (YAML or JSON) names
// steps that are task specs, their dependencies with conditions, parameters,
// fan-out over lists, per-step retries and timeouts, a workflow timeout and a
// failure policy.
//
// Flow:
//
//	submit ─ Parse (YAML/JSON) ─ Compile (validate: names, cycles, references,
//	         every instance's task spec) ─ store: workflow + step instances (pending)
//	engine (one leader, lease "workflows") each tick, for every active workflow:
//	  running steps ← their tasks' states (exit code, outputs; retries are the
//	                  scheduler's, a step fails only when its task has none left)
//	  pending steps → released (task created in the same transaction that marks
//	                  the step running), skipped (conditions can no longer hold)
//	                  or cancelled (failure policy stop, timeout, cancel)
//	  workflow      → succeeded / failed when every step ended
//
// The engine keeps no state of its own: every decision is recomputed from the
// store, and every write is guarded by the state it was computed from, so a
// restart or a leader change mid-workflow loses nothing and creates no task
// twice. Steps are ordinary tasks (labels heteroflow.workflow and
// heteroflow.step): the scheduler admits, places, retries and times them out,
// and quotas count each running step.
package workflow
