// Package app assembles the whole control plane that `heteroflow server`
// runs, so that the command and whole-server tests share one wiring:
//
//	server.New          core REST API, auth, audit, metrics store
//	  (/api/v1/write, /api/v1/otlp/v1/metrics, /prometheus)
//	agentapi.Attach     nodes, bootstrap tokens, agent enroll / heartbeat /
//	                    assignments / status / logs, node management
//	scheduling          plugins, quotas, why-pending, summary, slices, defrag
//
// Every subsystem mounts its routes on the one httpapi.API before the
// listeners open, so App.API().Routes() lists every endpoint the process
// serves, whatever package mounted it (the access test walks that list).
//
// Lifecycle: New (store open, routes mounted, nothing listening) → Start
// (listeners, then the agent sweeper and the scheduler loop) → Shutdown
// (loops stop first — the scheduler gives up its leader lease while the
// store is still open — then the listeners drain and the stores close).
// Run does all three around a context, as the command does.
package app
