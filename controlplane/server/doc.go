// Package server wires `heteroflow server`: configuration (one YAML file,
// HETEROFLOW_* environment variables and flags over one Defaults function,
// validated at load), the store, authentication, the audit writer, the REST
// API listener (:3333) and the console listener (:5173), which serves the
// embedded web console (pre-compressed assets, cache headers) and forwards
// /api/, /health and /prometheus/ to the API handler so the console can use
// relative URLs; /metrics there is the console's Metrics explorer page. The
// server's own metrics need metrics:read on the API listener, or are served
// unauthenticated on the optional metrics_addr listener.
//
// Later subsystems attach to a running server through Server.API() (see
// package httpapi: Handle, Mount, Register, Registry) before Start.
//
// Precedence, lowest to highest: Defaults(), the YAML file (--config),
// HETEROFLOW_* environment, command-line flags.
package server
