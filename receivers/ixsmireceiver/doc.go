// Package ixsmireceiver scrapes Iluvatar CoreX accelerators through ixsmi
// and normalises what it prints into the shared inventory model
// (receivers/inventory); an OpenTelemetry scraper turns the same snapshot
// into hw.gpu.* metrics.
//
// The parsers (parse*.go) are pure functions of the captured output:
// the nvidia-smi-like `ixsmi` table and its nvidia-smi compatible `--query-gpu` CSV.
// Parse detects the form by itself. Unknown values stay nil, never 0.
package ixsmireceiver
