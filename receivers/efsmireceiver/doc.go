// Package efsmireceiver scrapes Enflame GCU accelerators through efsmi
// and normalises what it prints into the shared inventory model
// (receivers/inventory); an OpenTelemetry scraper turns the same snapshot
// into hw.gpu.* metrics.
//
// The parsers (parse*.go) are pure functions of the captured output:
// the `efsmi` table.
// Parse detects the form by itself. Unknown values stay nil, never 0.
package efsmireceiver
