// Package hysmireceiver scrapes Hygon DCU accelerators through hy-smi
// and normalises what it prints into the shared inventory model
// (receivers/inventory); an OpenTelemetry scraper turns the same snapshot
// into hw.gpu.* metrics.
//
// The parsers (parse*.go) are pure functions of the captured output:
// `hy-smi` default table (DCU or newer HCU naming) and the Hygon `rocm-smi`/`hy-smi --json` form (memory in MiB, lower-case "vram" keys).
// Parse detects the form by itself. Unknown values stay nil, never 0.
package hysmireceiver
