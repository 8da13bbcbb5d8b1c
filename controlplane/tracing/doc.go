// Package tracing follows one task through the control plane with
// OpenTelemetry spans: the API request that submitted it → the scheduling
// cycle that placed it → the bind → (on the node agent) the start → the
// first heartbeat that reports it running. The steps run in different
// goroutines and processes, so the span context each step continues from
// is remembered per task here (Tasks) and crosses to the agent as a W3C
// traceparent in the protocol (agent/protocol TraceParent).
//
// Spans go to the global OpenTelemetry tracer provider. It is a no-op
// unless the process installs one (the heteroflow binary does when an
// OTLP endpoint is configured, see cmd/heteroflow): then nothing is
// remembered and every span is a no-op, so tracing off costs nothing but a
// context lookup.
package tracing
