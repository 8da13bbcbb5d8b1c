package inventory

import (
	"strings"
)

// This file is the one capability table: which isolation each vendor and
// model really offers per QoS tier (ARCHITECTURE.md, "QoS tiers"). The agent
// and receivers reuse IsolationFor to fill Device.Isolation.
//
// Sources: NVIDIA MIG user guide, "Supported MIG Profiles" (A100/H100/H200
// tables: memory in eighths, compute in sevenths, placement start slots);
// HAMi charts/hami/templates/scheduler/device-configmap.yaml for the Ascend
// vNPU templates (memory MiB, AI cores out of the chip's total); the
// smi-samples README "slicing knobs" table for driver limits per vendor.

// mig builds the six GPU-instance profiles shared by A100, H100 and H200:
// memory is counted in 8 slices and compute in 7; the profile name carries
// the marketing size, memory is the slice share of the device's memory.
// Placement (start slots over the 8 memory slices) is the guide's table:
// 1g ×7 at 0–6 (one slice each), 1g double-memory ×4 at 0,2,4,6, 2g ×3 at
// 0,2,4, 3g ×2 at 0,4, 4g ×1 at 0 (4 slices), 7g ×1 at 0 (all 8 slices).
func mig(memMiB int64, g1, g1x2, g2, g3, g4, g7 string) []PartitionProfile {
	slice := memMiB / 8
	p := func(name string, compute, size, max int, starts ...int) PartitionProfile {
		return PartitionProfile{Name: name, MemoryMiB: slice * int64(size), ComputeSlices: compute,
			TotalSlices: 7, Starts: starts, Size: size, MaxCount: max}
	}
	return []PartitionProfile{
		p(g1, 1, 1, 7, 0, 1, 2, 3, 4, 5, 6),
		p(g1x2, 1, 2, 4, 0, 2, 4, 6),
		p(g2, 2, 2, 3, 0, 2, 4),
		p(g3, 3, 4, 2, 0, 4),
		p(g4, 4, 4, 1, 0),
		p(g7, 7, 8, 1, 0),
	}
}

// vnpu builds Ascend vNPU templates: no placement slots, only the chip's AI
// core and memory budgets (the Ascend driver places them).
func vnpu(totalCores int, t ...struct {
	name  string
	mem   int64
	cores int
}) []PartitionProfile {
	out := make([]PartitionProfile, 0, len(t))
	for _, x := range t {
		out = append(out, PartitionProfile{Name: x.name, MemoryMiB: x.mem, ComputeSlices: x.cores,
			TotalSlices: totalCores, MaxCount: totalCores / x.cores})
	}
	return out
}

type tmpl = struct {
	name  string
	mem   int64
	cores int
}

// hardwareTable: (vendor, model prefix) → hardware partitioning. Model names
// are matched case-insensitively on the first matching prefix, longest first.
var hardwareTable = []struct {
	vendor, model string
	contains      string // extra substring that must appear (memory variants)
	kind          string
	profiles      []PartitionProfile
}{
	{VendorNVIDIA, "A100", "80G", "mig", mig(81920, "1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb")},
	{VendorNVIDIA, "A100", "", "mig", mig(40960, "1g.5gb", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb")},
	{VendorNVIDIA, "H100", "94G", "mig", mig(96256, "1g.12gb", "1g.24gb", "2g.24gb", "3g.47gb", "4g.47gb", "7g.94gb")},
	{VendorNVIDIA, "H100", "", "mig", mig(81920, "1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb")},
	{VendorNVIDIA, "H200", "", "mig", mig(144384, "1g.18gb", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb")},
	{VendorAscend, "910B2", "", "vnpu", vnpu(24, tmpl{"vir03_1c_8g", 8192, 3}, tmpl{"vir06_1c_16g", 16384, 6}, tmpl{"vir12_3c_32g", 32768, 12})},
	{VendorAscend, "910B3", "", "vnpu", vnpu(20, tmpl{"vir05_1c_16g", 16384, 5}, tmpl{"vir10_3c_32g", 32768, 10})},
	{VendorAscend, "910B4", "", "vnpu", vnpu(20, tmpl{"vir05_1c_8g", 8192, 5}, tmpl{"vir10_3c_16g", 16384, 10})},
	{VendorAscend, "910B", "", "vnpu", vnpu(24, tmpl{"vir03_1c_8g", 8192, 3}, tmpl{"vir06_1c_16g", 16384, 6}, tmpl{"vir12_3c_32g", 32768, 12})},
	{VendorAscend, "910A", "", "vnpu", vnpu(30, tmpl{"vir02", 2184, 2}, tmpl{"vir04", 4369, 4}, tmpl{"vir08", 8738, 8}, tmpl{"vir16", 17476, 16})},
	{VendorAscend, "310P", "", "vnpu", vnpu(8, tmpl{"vir01", 3072, 1}, tmpl{"vir02", 6144, 2}, tmpl{"vir04", 12288, 4})},
}

// driverLimits: Silver per vendor; "" = the vendor has no driver-level limit
// (Silver is then never offered). Ascend slices only through vNPU templates.
var driverLimits = map[string]string{
	VendorNVIDIA:    "hami-core", // also MPS; HAMi-core CUDA_DEVICE_MEMORY_LIMIT / SM_LIMIT
	VendorAMD:       "hami-core", // HIP_DEVICE_MEMORY_LIMIT, HSA_CU_MASK
	VendorHygon:     "hami-core",
	VendorCambricon: "env-limits", // CAMBRICON_SPLIT_MEMS
	VendorMThreads:  "hami-core",  // sgpu-memory / sgpu-core
	VendorMetaX:     "env-limits", // sGPU
	VendorIluvatar:  "hami-core",  // vMem / vCore
	VendorEnflame:   "env-limits", // DRS GCU
}

// Cambricon (SR-IOV vMLU), Hygon (vDCU) and Moore Threads (MPC) partition in
// hardware too, but their shapes are not tabled here yet: until they are,
// Gold on those devices takes a whole device rather than pretend.

// IsolationFor returns the isolation capabilities of a (vendor, model).
// Hardware is set only where a profile table exists, so Gold on other
// devices always means a whole device. Every listed vendor can time-share
// with visibility variables (Bronze) except Biren, whose only knob is SVI.
func IsolationFor(vendor, model string) Isolation {
	v := strings.ToLower(vendor)
	iso := Isolation{DriverLimits: driverLimits[v], Sharing: v != VendorBiren}
	m := strings.ToUpper(strings.TrimPrefix(strings.TrimPrefix(strings.ToUpper(model), "NVIDIA "), "ASCEND"))
	m = strings.TrimSpace(m)
	for _, h := range hardwareTable {
		if h.vendor == v && strings.HasPrefix(m, strings.ToUpper(h.model)) && strings.Contains(m, h.contains) {
			iso.Hardware = h.kind
			iso.Profiles = h.profiles
			return iso
		}
	}
	return iso
}
