// Package npusmireceiver scrapes Huawei Ascend accelerators through npu-smi
// and normalises what it prints into the shared inventory model
// (receivers/inventory); an OpenTelemetry scraper turns the same snapshot
// into hw.gpu.* metrics.
//
// The parsers (parse*.go) are pure functions of the captured output:
// `npu-smi info` in every version layout (1.9.x to 24.x, 310 multi-chip cards), `npu-smi info -m` (logical chip IDs) and `npu-smi info -t board|common|usages`.
// Parse detects the form by itself. Unknown values stay nil, never 0.
package npusmireceiver
