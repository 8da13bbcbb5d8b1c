package vendorcatalog

import "strings"

// Silver mechanisms (Isolation.DriverLimits).
const (
	DriverMPS       = "mps"        // CUDA MPS: per-client thread % and pinned memory limit
	DriverHAMiCore  = "hami-core"  // HAMi-core libvgpu.so: CUDA_DEVICE_MEMORY_LIMIT / SM_LIMIT
	DriverEnvLimits = "env-limits" // the vendor runtime's own split variables
)

// Isolation lists what a device supports, per QoS tier (ARCHITECTURE.md,
// "QoS tiers"): the scheduler never offers a tier the device lacks.
type Isolation struct {
	// Hardware partitioning (Gold): "mig", "vnpu", "sriov", "vdcu", "mpc",
	// or "" when the model has none (Gold then takes a whole device).
	Hardware string `json:"hardware,omitempty"`
	// Profiles are the hardware partition shapes the model offers.
	Profiles []PartitionProfile `json:"profiles,omitempty"`
	// DriverLimits (Silver): "mps", "hami-core", "env-limits", or "".
	DriverLimits string `json:"driver_limits,omitempty"`
	// Sharing (Bronze): software time-sharing with memory accounting.
	Sharing bool `json:"sharing"`
}

// PartitionProfile is one hardware partition shape, e.g. MIG 3g.40gb on
// A100-80GB: 3/7 of the compute, 40 GB, placeable at the listed start slots.
type PartitionProfile struct {
	Name          string `json:"name"`
	MemoryMiB     int64  `json:"memory_mib"`
	ComputeSlices int    `json:"compute_slices"` // out of TotalSlices
	TotalSlices   int    `json:"total_slices"`
	Starts        []int  `json:"starts,omitempty"` // legal placement start slots (MIG)
	Size          int    `json:"size,omitempty"`   // memory slices occupied (MIG placement)
	MaxCount      int    `json:"max_count"`
}

// Sources: NVIDIA MIG user guide, "Supported MIG Profiles" (A100/H100/H200
// tables: memory in eighths, compute in sevenths, placement start slots);
// HAMi charts/hami/templates/scheduler/device-configmap.yaml for the Ascend
// vNPU templates (memory MiB, AI cores out of the chip's total).

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

type tmpl struct {
	name  string
	mem   int64
	cores int
}

// vnpu builds Ascend vNPU templates: no placement slots, only the chip's AI
// core and memory budgets (the Ascend driver places them).
func vnpu(totalCores int, t ...tmpl) []PartitionProfile {
	out := make([]PartitionProfile, 0, len(t))
	for _, x := range t {
		out = append(out, PartitionProfile{Name: x.name, MemoryMiB: x.mem, ComputeSlices: x.cores,
			TotalSlices: totalCores, MaxCount: totalCores / x.cores})
	}
	return out
}

// Models are matched in order: the first whose prefix and extra substring
// match wins, so memory variants come before their base model.
var nvidiaMIGModels = []Model{
	{"A100", "80G", mig(81920, "1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb")},
	{"A100", "", mig(40960, "1g.5gb", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb")},
	{"H100", "94G", mig(96256, "1g.12gb", "1g.24gb", "2g.24gb", "3g.47gb", "4g.47gb", "7g.94gb")},
	{"H100", "", mig(81920, "1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb")},
	{"H200", "", mig(144384, "1g.18gb", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb")},
}

var ascendVNPUModels = []Model{
	{"910B2", "", vnpu(24, tmpl{"vir03_1c_8g", 8192, 3}, tmpl{"vir06_1c_16g", 16384, 6}, tmpl{"vir12_3c_32g", 32768, 12})},
	{"910B3", "", vnpu(20, tmpl{"vir05_1c_16g", 16384, 5}, tmpl{"vir10_3c_32g", 32768, 10})},
	{"910B4", "", vnpu(20, tmpl{"vir05_1c_8g", 8192, 5}, tmpl{"vir10_3c_16g", 16384, 10})},
	{"910B", "", vnpu(24, tmpl{"vir03_1c_8g", 8192, 3}, tmpl{"vir06_1c_16g", 16384, 6}, tmpl{"vir12_3c_32g", 32768, 12})},
	{"910A", "", vnpu(30, tmpl{"vir02", 2184, 2}, tmpl{"vir04", 4369, 4}, tmpl{"vir08", 8738, 8}, tmpl{"vir16", 17476, 16})},
	{"310P", "", vnpu(8, tmpl{"vir01", 3072, 1}, tmpl{"vir02", 6144, 2}, tmpl{"vir04", 12288, 4})},
}

// Cambricon (SR-IOV vMLU), Hygon (vDCU) and Moore Threads (MPC) partition in
// hardware too, but their shapes are not tabled: until they are, Gold on
// those devices takes a whole device rather than pretend.

// IsolationFor returns the isolation capabilities of a (vendor, model) as
// the vendor's stack offers them. Hardware is set only where a profile table
// exists, so Gold on other devices always means a whole device. DriverLimits
// is the vendor's preferred Silver mechanism.
func IsolationFor(vendor, model string) Isolation {
	e, ok := Lookup(vendor)
	if !ok {
		return Isolation{}
	}
	iso := Isolation{Sharing: e.Sharing}
	if len(e.DriverLimits) > 0 {
		iso.DriverLimits = e.DriverLimits[0]
	}
	if p := e.ModelProfiles(model); p != nil {
		iso.Hardware, iso.Profiles = e.Hardware, p
	}
	return iso
}

// ModelProfiles returns the hardware partition shapes of model, or nil.
func (e Entry) ModelProfiles(model string) []PartitionProfile {
	m := strings.ToUpper(model)
	for _, brand := range []string{"NVIDIA ", "ASCEND"} {
		m = strings.TrimPrefix(m, brand)
	}
	m = strings.TrimSpace(m)
	for _, x := range e.Models {
		if strings.HasPrefix(m, strings.ToUpper(x.Prefix)) && strings.Contains(m, x.Contains) {
			return x.Profiles
		}
	}
	return nil
}
