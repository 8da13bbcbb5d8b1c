package vendorcatalog

import (
	"path/filepath"
	"slices"
	"strings"
)

// Vendor ids accepted everywhere (CLI flags, API, inventory).
const (
	NVIDIA    = "nvidia"
	AMD       = "amd"
	Hygon     = "hygon"
	Ascend    = "ascend"
	Cambricon = "cambricon"
	Kunlunxin = "kunlunxin"
	MThreads  = "mthreads"
	Biren     = "biren"
	Iluvatar  = "iluvatar"
	MetaX     = "metax"
	Enflame   = "enflame"
)

// IDKind says which identifier of a device the vendor's visible-device
// variable takes.
type IDKind string

const (
	// IDUUID: the partition UUID (MIG), else the device UUID, else the index.
	// NVIDIA: MPS and MIG renumber indices, UUIDs stay right.
	IDUUID IDKind = "uuid"
	// IDPartitionOrIndex: a created partition's id (vNPU id, vDCU id, vMLU
	// index), else the vendor's logical index as the CLI prints it.
	IDPartitionOrIndex IDKind = "partition-or-index"
	// IDIndex: the vendor's logical index as the CLI prints it.
	IDIndex IDKind = "index"
)

// CLI is one management tool: its base name, absolute install paths tried
// after PATH, and the output forms its parser reads (the first is the one a
// full snapshot takes).
type CLI struct {
	Name  string
	Paths []string
	Forms []string
}

// ContainerHints tell the agent how the vendor's devices enter a container
// beyond the /dev nodes and the runtime variable.
type ContainerHints struct {
	// Runtime is the vendor's container runtime or hook, for messages and
	// docs ("nvidia-container-toolkit", "ascend-docker-runtime").
	Runtime string
	// GPUFlag: the engine's own GPU support selects the devices (docker and
	// nerdctl `--gpus`, podman CDI `--device <CDIKind>=<id>`).
	GPUFlag bool
	CDIKind string
	// GroupAdd are groups the container's user needs (ROCm: video).
	GroupAdd []string
	// Mounts are read-only bind mounts of the host driver the runtime
	// libraries need ("host:container:ro").
	Mounts []string
}

// Entry is everything the project knows about one vendor.
type Entry struct {
	ID   string
	Name string // display name
	CLIs []CLI
	// ProcessVars are the visible-device variables a process on the host
	// reads; the agent sets the first. Empty when the vendor has none (the
	// task must then run in a container).
	ProcessVars []string
	// ContainerVar is read by the vendor's container runtime hook.
	ContainerVar string
	DeviceID     IDKind
	// NodeGlobs match /dev nodes that only the vendor's driver creates (the
	// per-device nodes, or the driver's own control node where the device
	// nodes are the generic /dev/dri ones): used to notice devices whose CLI
	// is missing.
	NodeGlobs []string
	// DeviceNode is the per-device node a container needs: "{card}" is
	// replaced by the physical board number (the /dev minor, which can differ
	// from the logical index), "{index}" by the logical index; "" when the
	// runtime hook injects the nodes.
	DeviceNode string
	// ControlNodes are shared /dev entries every container of the vendor needs.
	ControlNodes []string
	Container    ContainerHints
	// DriverLimits are the Silver mechanisms the vendor's stack offers, in
	// preference order ("mps", "hami-core", "env-limits"); a node reports
	// the ones it can enforce. Empty: Silver is never offered.
	DriverLimits []string
	// SilverTools are the isolation programs (not parsed, driven) the agent
	// looks for on PATH to enforce DriverLimits: the CUDA MPS control daemon.
	SilverTools map[string]string
	// SilverLibs are where a preloaded limiter library is installed, by
	// mechanism (HAMi-core libvgpu.so); the first that exists is used.
	SilverLibs map[string][]string
	// SilverNodes are /dev entries, by mechanism, that only a driver which
	// enforces it creates (Cambricon's memory split: /dev/cambricon-split);
	// the mechanism is offered only where the node exists, and a container
	// gets it.
	SilverNodes map[string]string
	// SilverMounts are host programs a container of the mechanism needs,
	// mounted read-only where they exist (Cambricon's smlu-containerd).
	SilverMounts map[string][]string
	// SilverOneDevice: mechanisms that hold one device per task (one CUDA
	// MPS daemon per GPU; Cambricon's split names a single card).
	SilverOneDevice []string
	// SilverModels restricts a mechanism to the models whose name starts
	// with one of the prefixes (case-insensitive, after the brand); a
	// mechanism not listed holds on every model.
	SilverModels map[string][]string
	// CollectiveHCAVar names the RDMA adapters the vendor's collective
	// library uses (NCCL/RCCL NCCL_IB_HCA); CollectiveIfVar its socket
	// interface (Ascend HCCL_SOCKET_IFNAME). Empty: not passed.
	CollectiveHCAVar string
	CollectiveIfVar  string
	// Sharing: Bronze time-sharing through the visible-device variables.
	Sharing bool
	// Hardware is the Gold partitioning kind ("mig", "vnpu", "vmlu",
	// "vdcu", "mpc") driven through the CLI; Models give the shapes.
	Hardware string
	Models   []Model
}

// Model is one (model prefix, memory variant) with its partition shapes.
type Model struct {
	Prefix   string // matched case-insensitively, after the vendor's brand prefix
	Contains string // extra substring that must appear (memory variants)
	Profiles []PartitionProfile
}

// Catalog is the vendor table, in display order.
func Catalog() []Entry { return entries }

// IDs lists every vendor id in display order.
func IDs() []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.ID
	}
	return out
}

// Lookup returns the vendor's entry; ok is false for an unknown id.
func Lookup(id string) (Entry, bool) {
	id = strings.ToLower(strings.TrimSpace(id))
	for _, e := range entries {
		if e.ID == id {
			return e, true
		}
	}
	return Entry{}, false
}

// ToolVendor maps a CLI name or install path, or an isolation program
// (SilverTools), to its vendor, or "".
func ToolVendor(tool string) string {
	for _, e := range entries {
		for _, c := range e.CLIs {
			if c.Name == tool || slices.Contains(c.Paths, tool) {
				return e.ID
			}
		}
		for _, t := range e.SilverTools {
			if t == tool {
				return e.ID
			}
		}
	}
	return ""
}

// SilverToolNames lists every vendor's isolation programs, sorted.
func SilverToolNames() []string {
	var out []string
	for _, e := range entries {
		for _, t := range e.SilverTools {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
}

// ToolNames lists every CLI base name of every vendor.
func ToolNames() []string {
	var out []string
	for _, e := range entries {
		for _, c := range e.CLIs {
			out = append(out, c.Name)
		}
	}
	return out
}

// VisibleVar returns the variable that selects the vendor's devices: the
// container runtime's in container mode, else the first process variable.
func (e Entry) VisibleVar(container bool) string {
	if container {
		return e.ContainerVar
	}
	if len(e.ProcessVars) == 0 {
		return ""
	}
	return e.ProcessVars[0]
}

// SilverOneDeviceOnly reports whether the vendor's Silver mechanism holds
// one device per task (the scheduler then refuses multi-device Silver).
func SilverOneDeviceOnly(vendor, mechanism string) bool {
	e, ok := Lookup(vendor)
	return ok && slices.Contains(e.SilverOneDevice, mechanism)
}

// SilverOnModel reports whether the vendor's Silver mechanism works on the
// model (SilverModels).
func SilverOnModel(vendor, mechanism, model string) bool {
	e, ok := Lookup(vendor)
	if !ok {
		return false
	}
	prefixes, limited := e.SilverModels[mechanism]
	if !limited {
		return true
	}
	m := strings.ToUpper(strings.TrimSpace(model))
	for _, p := range prefixes {
		if strings.HasPrefix(m, strings.ToUpper(p)) {
			return true
		}
	}
	return false
}

// Offers reports whether the vendor's stack has the Silver mechanism.
func (e Entry) Offers(driverLimit string) bool { return slices.Contains(e.DriverLimits, driverLimit) }

// PresentNodes returns the vendor's per-device /dev nodes that exist under
// root ("/" on a host; a temp dir in tests), sorted. Devices whose nodes are
// present while the vendor's CLI is missing are worth a warning: the node
// has accelerators it cannot report.
func (e Entry) PresentNodes(root string) []string {
	var out []string
	for _, g := range e.NodeGlobs {
		m, _ := filepath.Glob(filepath.Join(root, g)) // the globs are constant and valid
		out = append(out, m...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
