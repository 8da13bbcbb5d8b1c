package runner

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/heteroflow/heteroflow/agent/protocol"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// SilverEnv returns the driver-level limit variables (QoS Silver) for
// devices. Ordinals in per-device variables are positions in the task's
// visible set, because that is how the runtime numbers them after
// visibility filtering. A vendor without driver-level limits is an error:
// the scheduler must not offer Silver there, and the agent does not pretend.
//
// Knobs (sources in smi-samples/README.md):
//   - NVIDIA hami-core: CUDA_DEVICE_MEMORY_LIMIT[_<i>]=<MiB>m, CUDA_DEVICE_SM_LIMIT=<percent>
//     (read by HAMi-core's libvgpu.so, which must be preloaded);
//   - NVIDIA mps: CUDA_MPS_ACTIVE_THREAD_PERCENTAGE, CUDA_MPS_PINNED_DEVICE_MEM_LIMIT="0=<MiB>M,…";
//   - AMD: HIP_DEVICE_MEMORY_LIMIT=<MiB>m (HAMi AMD vGPU);
//   - Cambricon memory split: CAMBRICON_SPLIT_ENABLE=1, CAMBRICON_SPLIT_VISIBLE_DEVICES=<card>,
//     CAMBRICON_SPLIT_MEMS=<GiB> (one card; whole GiB, never above the slice's memory),
//     as Cambricon's device plugin sets them (vendorcatalog's Cambricon entry names the source).
func SilverEnv(devices []protocol.DeviceSlice) (map[string]string, error) {
	env := map[string]string{}
	byVendor := map[string][]protocol.DeviceSlice{}
	for _, d := range devices {
		byVendor[d.Vendor] = append(byVendor[d.Vendor], d)
	}
	for vendor, ds := range byVendor {
		switch vendor {
		case inventory.VendorNVIDIA:
			if ds[0].Isolation == protocol.IsolationMPS {
				nvidiaMPS(env, ds)
			} else {
				nvidiaHAMi(env, ds)
			}
		case inventory.VendorAMD:
			if m, ok := uniformMemory(ds); ok && m > 0 {
				env["HIP_DEVICE_MEMORY_LIMIT"] = strconv.Itoa(m) + "m"
			} else if !ok {
				return nil, fmt.Errorf("amd: HIP_DEVICE_MEMORY_LIMIT is one value for all devices; slices ask for different memory")
			}
		case inventory.VendorCambricon:
			if err := cambriconSplit(env, ds); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("vendor %s has no driver-level limits (QoS silver)", vendor)
		}
	}
	return env, nil
}

func nvidiaHAMi(env map[string]string, ds []protocol.DeviceSlice) {
	if m, ok := uniformMemory(ds); ok {
		if m > 0 {
			env["CUDA_DEVICE_MEMORY_LIMIT"] = strconv.Itoa(m) + "m"
		}
	} else {
		for i, d := range ds {
			if d.MemoryMiB > 0 {
				env["CUDA_DEVICE_MEMORY_LIMIT_"+strconv.Itoa(i)] = strconv.Itoa(d.MemoryMiB) + "m"
			}
		}
	}
	// HAMi-core takes one SM limit for the process; use the smallest share.
	if p := minCompute(ds); p > 0 && p < 100 {
		env["CUDA_DEVICE_SM_LIMIT"] = strconv.Itoa(p)
	}
}

func nvidiaMPS(env map[string]string, ds []protocol.DeviceSlice) {
	if p := minCompute(ds); p > 0 && p < 100 {
		env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] = strconv.Itoa(p)
	}
	var parts []string
	for i, d := range ds {
		if d.MemoryMiB > 0 {
			parts = append(parts, fmt.Sprintf("%d=%dM", i, d.MemoryMiB))
		}
	}
	if len(parts) > 0 {
		env["CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"] = strings.Join(parts, ",")
	}
}

func uniformMemory(ds []protocol.DeviceSlice) (int, bool) {
	m := ds[0].MemoryMiB
	for _, d := range ds[1:] {
		if d.MemoryMiB != m {
			return 0, false
		}
	}
	return m, true
}

func minCompute(ds []protocol.DeviceSlice) int {
	p := 0
	for _, d := range ds {
		if d.ComputePercent > 0 && (p == 0 || d.ComputePercent < p) {
			p = d.ComputePercent
		}
	}
	return p
}

// cambriconSplitUnitMiB is the split's memory unit: Cambricon's device plugin
// offers one share per GiB of a card and passes the count of shares.
const cambriconSplitUnitMiB = 1024

// cambriconSplit writes the memory split of one card. The limit is the
// whole GiB within the slice (a task never gets more than it reserved).
func cambriconSplit(env map[string]string, ds []protocol.DeviceSlice) error {
	if len(ds) != 1 {
		return fmt.Errorf("cambricon memory split: one card per task, not %d", len(ds))
	}
	gib := ds[0].MemoryMiB / cambriconSplitUnitMiB
	if gib < 1 {
		return fmt.Errorf("cambricon memory split: memory_mib %d is below one share (%d MiB)", ds[0].MemoryMiB, cambriconSplitUnitMiB)
	}
	env["CAMBRICON_SPLIT_ENABLE"] = "1"
	env["CAMBRICON_SPLIT_VISIBLE_DEVICES"] = strconv.Itoa(ds[0].Index)
	env["CAMBRICON_SPLIT_MEMS"] = strconv.Itoa(gib)
	return nil
}
