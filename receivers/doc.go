// Package receivers is the home of HeteroFlow's vendor telemetry: one
// OpenTelemetry scraper receiver per accelerator management CLI (nvidia-smi,
// rocm-smi, hy-smi, npu-smi, cnmon, xpu-smi, mthreads-gmi, brsmi, ixsmi,
// mx-smi, efsmi), all normalising to the inventory model in
// receivers/inventory. The same pure parsers feed metrics and inventory.
package receivers
