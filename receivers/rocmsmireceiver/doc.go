// Package rocmsmireceiver scrapes AMD accelerators through rocm-smi
// and normalises what it prints into the shared inventory model
// (receivers/inventory); an OpenTelemetry scraper turns the same snapshot
// into hw.gpu.* metrics.
//
// The parsers (parse*.go) are pure functions of the captured output:
// `rocm-smi --json` (memory in bytes, per-card objects keyed cardN) and the concise default table.
// Parse detects the form by itself. Unknown values stay nil, never 0.
package rocmsmireceiver
