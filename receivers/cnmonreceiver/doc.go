// Package cnmonreceiver scrapes Cambricon MLU accelerators through cnmon
// and normalises what it prints into the shared inventory model
// (receivers/inventory); an OpenTelemetry scraper turns the same snapshot
// into hw.gpu.* metrics.
//
// The parsers (parse*.go) are pure functions of the captured output:
// the `cnmon` table in the 4.x layout (Inited Driver, vMemory-Usage) and 5.x layout (Bus-Id, VF column, SR-IOV).
// Parse detects the form by itself. Unknown values stay nil, never 0.
package cnmonreceiver
