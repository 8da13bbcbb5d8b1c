// Package mxsmireceiver scrapes MetaX accelerators through mx-smi
// and normalises what it prints into the shared inventory model
// (receivers/inventory); an OpenTelemetry scraper turns the same snapshot
// into hw.gpu.* metrics.
//
// The parsers (parse*.go) are pure functions of the captured output:
// the `mx-smi` table (2.1.x and 2.2.x layouts).
// Parse detects the form by itself. Unknown values stay nil, never 0.
package mxsmireceiver
