// Package nvidiasmireceiver scrapes NVIDIA accelerators through nvidia-smi
// and normalises what it prints into the shared inventory model
// (receivers/inventory); an OpenTelemetry scraper turns the same snapshot
// into hw.gpu.* metrics.
//
// The parsers (parse*.go) are pure functions of the captured output:
// `nvidia-smi -q -x` XML (driver 510 / DTD v11 and 535+ / DTD v12 schemas, MIG devices, N/A, Windows WDDM), `--query-gpu` CSV ([N/A], [Not Supported]), `-L` (with MIG children), `mig -lgi`, and `topo -m` (links and NUMA affinity).
// Parse detects the form by itself. Unknown values stay nil, never 0.
package nvidiasmireceiver
