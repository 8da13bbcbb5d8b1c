// Package xpusmireceiver scrapes Baidu Kunlunxin XPU accelerators through xpu-smi / xpu_smi
// and normalises what it prints into the shared inventory model
// (receivers/inventory); an OpenTelemetry scraper turns the same snapshot
// into hw.gpu.* metrics.
//
// The parsers (parse*.go) are pure functions of the captured output:
// the `xpu_smi` DEVICES table and the machine-readable `xpu-smi -m` rows; Intel's unrelated xpu-smi (xpumanager) output is detected and refused.
// Parse detects the form by itself. Unknown values stay nil, never 0.
package xpusmireceiver
