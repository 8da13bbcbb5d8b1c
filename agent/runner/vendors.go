package runner

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/heteroflow/heteroflow/agent/protocol"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// vendorDevices says how one vendor selects devices. Sources are in
// ../../../shared/smi-samples/README.md ("Device-selection environment
// variables and slicing knobs").
type vendorDevices struct {
	// ProcessVar is the variable a process on the host reads. Empty when the
	// vendor has none (Biren): such tasks must run in a container.
	ProcessVar string
	// ContainerVar is read by the vendor's container runtime hook.
	ContainerVar string
	// ID names a device in those variables.
	ID func(d protocol.DeviceSlice) string
	// Nodes are the /dev entries a container needs for device d (besides
	// ControlNodes); nil when the vendor's runtime hook injects them.
	Nodes func(d protocol.DeviceSlice) []string
	// ControlNodes are shared /dev entries every container of the vendor needs.
	ControlNodes []string
}

// vendorTable is the one place that knows each vendor's selection knobs.
//
// Why each ID: NVIDIA takes UUIDs (MIG UUIDs for MIG slices) because MPS and
// MIG renumber indices; Ascend takes the Chip Logic ID (not the NPU ID), or the
// vNPU id of a created vNPU; the others take the vendor's logical index.
// AMD sets only HIP_VISIBLE_DEVICES: setting ROCR_VISIBLE_DEVICES too would
// filter twice and HIP would then index into the already-filtered set.
var vendorTable = map[string]vendorDevices{
	inventory.VendorNVIDIA: {ProcessVar: "CUDA_VISIBLE_DEVICES", ContainerVar: "NVIDIA_VISIBLE_DEVICES",
		ID: uuidOrIndex},
	inventory.VendorAMD: {ProcessVar: "HIP_VISIBLE_DEVICES", ContainerVar: "AMD_VISIBLE_DEVICES",
		ID: index, ControlNodes: []string{"/dev/kfd", "/dev/dri"}},
	inventory.VendorHygon: {ProcessVar: "HIP_VISIBLE_DEVICES", ContainerVar: "HYGON_VISIBLE_DEVICES",
		ID: partitionOrIndex, ControlNodes: []string{"/dev/kfd", "/dev/dri", "/dev/mkfd"}},
	inventory.VendorAscend: {ProcessVar: "ASCEND_RT_VISIBLE_DEVICES", ContainerVar: "ASCEND_VISIBLE_DEVICES",
		ID: partitionOrIndex,
		Nodes: func(d protocol.DeviceSlice) []string {
			return []string{"/dev/davinci" + strconv.Itoa(physicalID(d))}
		},
		ControlNodes: []string{"/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc"}},
	inventory.VendorCambricon: {ProcessVar: "MLU_VISIBLE_DEVICES", ContainerVar: "CAMBRICON_VISIBLE_DEVICES",
		ID: partitionOrIndex,
		Nodes: func(d protocol.DeviceSlice) []string {
			return []string{"/dev/cambricon_dev" + strconv.Itoa(d.Index)}
		},
		ControlNodes: []string{"/dev/cambricon_ctl"}},
	inventory.VendorKunlunxin: {ProcessVar: "XPU_VISIBLE_DEVICES", ID: index,
		// The smi index is not always the /dev/xpuN suffix (README §6); the
		// inventory's Card carries the minor number when the parser knows it.
		Nodes: func(d protocol.DeviceSlice) []string {
			return []string{"/dev/xpu" + strconv.Itoa(physicalID(d))}
		},
		ControlNodes: []string{"/dev/xpuctrl"}},
	inventory.VendorMThreads: {ProcessVar: "MUSA_VISIBLE_DEVICES", ContainerVar: "MTHREADS_VISIBLE_DEVICES",
		ID: index},
	inventory.VendorMetaX: {ProcessVar: "CUDA_VISIBLE_DEVICES", ID: index,
		ControlNodes: []string{"/dev/dri", "/dev/mxcd"}},
	inventory.VendorIluvatar: {ProcessVar: "CUDA_VISIBLE_DEVICES", ContainerVar: "IX_VISIBLE_DEVICES",
		ID: index},
	inventory.VendorEnflame: {ProcessVar: "TOPS_VISIBLE_DEVICES", ContainerVar: "ENFLAME_VISIBLE_DEVICES",
		ID: index,
		Nodes: func(d protocol.DeviceSlice) []string {
			return []string{"/dev/gcu" + strconv.Itoa(d.Index)}
		}},
	inventory.VendorBiren: {ID: index,
		Nodes: func(d protocol.DeviceSlice) []string {
			return []string{"/dev/biren/card_" + strconv.Itoa(d.Index)}
		}},
}

func index(d protocol.DeviceSlice) string { return strconv.Itoa(d.Index) }

func uuidOrIndex(d protocol.DeviceSlice) string {
	switch {
	case d.PartitionUUID != "":
		return d.PartitionUUID
	case d.UUID != "":
		return d.UUID
	}
	return strconv.Itoa(d.Index)
}

func partitionOrIndex(d protocol.DeviceSlice) string {
	if d.PartitionID != "" {
		return d.PartitionID
	}
	return strconv.Itoa(d.Index)
}

func physicalID(d protocol.DeviceSlice) int {
	if d.Card != nil {
		return *d.Card
	}
	return d.Index
}

// VisibilityEnv returns the device-selection variables for devices. In
// container mode it returns the runtime-hook variables instead of the
// process ones: inside a container the devices are renumbered from 0, so a
// host index would point at the wrong device.
func VisibilityEnv(devices []protocol.DeviceSlice, container bool) (map[string]string, error) {
	lists := map[string][]string{}
	owner := map[string]string{}
	for _, d := range devices {
		v, ok := vendorTable[d.Vendor]
		if !ok {
			return nil, fmt.Errorf("unknown vendor %q", d.Vendor)
		}
		name := v.ProcessVar
		if container {
			name = v.ContainerVar
		}
		if name == "" {
			if container {
				continue // device nodes alone select the devices (ContainerArgs)
			}
			return nil, fmt.Errorf("vendor %s has no process-level device-selection variable; run the task with an image", d.Vendor)
		}
		if prev, ok := owner[name]; ok && prev != d.Vendor {
			// Iluvatar/MetaX reuse CUDA_VISIBLE_DEVICES: one task cannot mix them with NVIDIA.
			return nil, fmt.Errorf("vendors %s and %s both select devices with %s; one task cannot use both", prev, d.Vendor, name)
		}
		owner[name] = d.Vendor
		lists[name] = append(lists[name], v.ID(d))
	}
	env := make(map[string]string, len(lists))
	for k, ids := range lists {
		env[k] = strings.Join(ids, ",")
	}
	return env, nil
}

// DeviceNodes lists the /dev entries a container needs for devices, sorted
// and without duplicates.
func DeviceNodes(devices []protocol.DeviceSlice) []string {
	seen := map[string]bool{}
	for _, d := range devices {
		v := vendorTable[d.Vendor]
		if v.Nodes != nil {
			for _, n := range v.Nodes(d) {
				seen[n] = true
			}
		}
		for _, n := range v.ControlNodes {
			seen[n] = true
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
