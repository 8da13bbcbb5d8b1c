// Package mthreadsgmireceiver scrapes Moore Threads MUSA accelerators through mthreads-gmi
// and normalises what it prints into the shared inventory model
// (receivers/inventory); an OpenTelemetry scraper turns the same snapshot
// into hw.gpu.* metrics.
//
// The parsers (parse*.go) are pure functions of the captured output:
// the default `mthreads-gmi` table (1.x and 2.x) and `mthreads-gmi --query --json`.
// Parse detects the form by itself. Unknown values stay nil, never 0.
package mthreadsgmireceiver
