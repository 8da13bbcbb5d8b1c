// Package server wires `heteroflow server`: configuration (one YAML file,
// HETEROFLOW_* environment variables and flags over one Defaults function,
// validated at load), the store, authentication, the audit writer, the REST
// API listener (:3333) and the console listener (:5173), which serves the
// embedded web console and forwards /api/, /health, /metrics and
// /prometheus/ to the API handler so the console can use relative URLs.
//
// Later subsystems attach to a running server through Server.API() (see
// package httpapi: Handle, Mount, Register, Registry) before Start.
//
// Precedence, lowest to highest: Defaults(), the YAML file (--config),
// HETEROFLOW_* environment, command-line flags.
package server
