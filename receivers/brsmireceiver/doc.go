// Package brsmireceiver scrapes Biren accelerators through brsmi
// and normalises what it prints into the shared inventory model
// (receivers/inventory); an OpenTelemetry scraper turns the same snapshot
// into hw.gpu.* metrics.
//
// The parsers (parse*.go) are pure functions of the captured output:
// the `brsmi` table as far as Biren documents it (stability: development; no public sample exists, see README.md).
// Parse detects the form by itself. Unknown values stay nil, never 0.
package brsmireceiver
