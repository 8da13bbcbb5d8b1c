// Package inventory is the normalized device model shared by every vendor
// parser, the agent's node registration and the scheduler's resource model
// (see ARCHITECTURE.md, "Resource model").
//
// Unknown values are nil pointers, serialised as JSON null — never 0.
package inventory

import "github.com/heteroflow/heteroflow/receivers/vendorcatalog"

// Vendor names accepted everywhere (CLI flags, API, inventory): the ids of
// the vendor catalog (receivers/vendorcatalog).
const (
	VendorNVIDIA    = vendorcatalog.NVIDIA
	VendorAMD       = vendorcatalog.AMD
	VendorHygon     = vendorcatalog.Hygon
	VendorAscend    = vendorcatalog.Ascend
	VendorCambricon = vendorcatalog.Cambricon
	VendorKunlunxin = vendorcatalog.Kunlunxin
	VendorMThreads  = vendorcatalog.MThreads
	VendorBiren     = vendorcatalog.Biren
	VendorIluvatar  = vendorcatalog.Iluvatar
	VendorMetaX     = vendorcatalog.MetaX
	VendorEnflame   = vendorcatalog.Enflame
)

// Vendors lists every supported vendor in display order (the catalog's).
var Vendors = vendorcatalog.IDs()

// Snapshot is everything one vendor CLI reported on one node at one time.
type Snapshot struct {
	Vendor         string   `json:"vendor"`
	DriverVersion  *string  `json:"driver_version"`
	ToolVersion    *string  `json:"tool_version,omitempty"`
	RuntimeVersion *string  `json:"runtime_version,omitempty"` // CUDA / ROCm / CANN / …
	Devices        []Device `json:"devices"`
	// RDMA are the node's InfiniBand / RoCE devices with their affinity to
	// this vendor's devices (the same list in every snapshot of the node).
	RDMA []RDMADevice `json:"rdma,omitempty"`
	// Warnings are per-device or per-field problems that did not stop the
	// parse (a partial scrape error, not a dead scrape).
	Warnings []string `json:"warnings,omitempty"`
}

// Device is one accelerator (for multi-chip cards such as Ascend 310: one
// logical chip, with Card naming the physical board).
type Device struct {
	// Index is the vendor's logical index: the number the device-selection
	// variable takes (CUDA index, Ascend Chip Logic ID, cnmon Card, …).
	Index              int         `json:"index"`
	UUID               *string     `json:"uuid"`
	Serial             *string     `json:"serial,omitempty"`
	Model              string      `json:"model"`
	MemoryTotalMiB     *int64      `json:"memory_total_mib"`
	MemoryUsedMiB      *int64      `json:"memory_used_mib"`
	UtilizationPercent *float64    `json:"utilization_percent"`
	TemperatureCelsius *float64    `json:"temperature_celsius"`
	PowerWatts         *float64    `json:"power_watts"`
	PowerLimitWatts    *float64    `json:"power_limit_watts,omitempty"`
	BusID              *string     `json:"bus_id"` // normalised to 4-hex-digit domain, lower case: 0000:3b:00.0
	NUMANode           *int        `json:"numa_node,omitempty"`
	Health             *string     `json:"health"` // "ok", "warning", "critical", or the vendor's word
	FirmwareVersion    *string     `json:"firmware_version,omitempty"`
	Card               *int        `json:"card,omitempty"` // physical board (NPU ID) when one card has several chips
	Chip               *int        `json:"chip,omitempty"`
	ECCErrors          *int64      `json:"ecc_errors,omitempty"`
	Partitions         []Partition `json:"partitions"`
	// MIGMode: the GPU is in MIG mode, so it runs work only inside its MIG
	// instances (never as a whole device).
	MIGMode   bool      `json:"mig_mode,omitempty"`
	Links     []Link    `json:"links,omitempty"`
	Isolation Isolation `json:"isolation"`
}

// Partition is a hardware or driver partition currently present on the
// device: a MIG instance, a vNPU, an SR-IOV VF / vMLU, a vDCU, an MPC slice.
type Partition struct {
	Kind           string  `json:"kind"` // "mig", "vnpu", "vf", "vdcu", "mpc"
	ID             string  `json:"id"`   // e.g. MIG GI id, VF index
	UUID           *string `json:"uuid,omitempty"`
	Profile        *string `json:"profile,omitempty"` // "1g.10gb", "vir03_1c_8g"
	MemoryTotalMiB *int64  `json:"memory_total_mib,omitempty"`
	MemoryUsedMiB  *int64  `json:"memory_used_mib,omitempty"`
	ComputeUnits   *int    `json:"compute_units,omitempty"` // SMs, AICores, CUs
	Placement      *string `json:"placement,omitempty"`     // MIG "start:size"
}

// LinkType orders interconnects from fastest to slowest for Topology scoring.
type LinkType string

const (
	LinkNVLink  LinkType = "nvlink"
	LinkHCCS    LinkType = "hccs"
	LinkMLULink LinkType = "mlulink"
	LinkXGMI    LinkType = "xgmi"
	LinkMetaX   LinkType = "metaxlink"
	LinkPIX     LinkType = "pix"  // same PCIe switch
	LinkPXB     LinkType = "pxb"  // several PCIe switches
	LinkPHB     LinkType = "phb"  // same host bridge
	LinkNode    LinkType = "node" // same NUMA node, across host bridges
	LinkSys     LinkType = "sys"  // across NUMA nodes (SMP interconnect)
)

// Link is a connection from this device to another device on the node.
type Link struct {
	Peer  int      `json:"peer"` // peer's Index
	Type  LinkType `json:"type"`
	Lanes int      `json:"lanes,omitempty"` // NV<n> count, when shown
}

// Isolation and PartitionProfile are the catalog's types: what a device
// supports per QoS tier, and one hardware partition shape.
type (
	Isolation        = vendorcatalog.Isolation
	PartitionProfile = vendorcatalog.PartitionProfile
)

// RDMA kinds.
const (
	RDMAInfiniBand = "infiniband"
	RDMARoCE       = "roce"
)

// RDMADevice is one RDMA adapter (an mlx5_0 under /sys/class/infiniband).
type RDMADevice struct {
	Name     string     `json:"name"`
	Kind     string     `json:"kind"` // RDMAInfiniBand or RDMARoCE (from the ports' link layer)
	BusID    *string    `json:"bus_id,omitempty"`
	NUMANode *int       `json:"numa_node,omitempty"`
	Ports    []RDMAPort `json:"ports"`
	// Affinity is the PCIe/NUMA path from each accelerator of the snapshot's
	// vendor to this adapter, closest first.
	Affinity []RDMAAffinity `json:"affinity,omitempty"`
}

// RDMAPort is one port of an RDMA adapter.
type RDMAPort struct {
	Port      int      `json:"port"`
	State     string   `json:"state"`      // "ACTIVE", "DOWN", …
	LinkLayer string   `json:"link_layer"` // "InfiniBand" or "Ethernet"
	RateGbps  *float64 `json:"rate_gbps,omitempty"`
	NetDev    string   `json:"netdev,omitempty"` // the port's network interface (RoCE, IPoIB)
}

// RDMAAffinity says how far accelerator Device (its Index) is from an
// adapter: LinkPIX (same PCIe switch) … LinkSys (another NUMA node).
type RDMAAffinity struct {
	Device int      `json:"device"`
	Link   LinkType `json:"link"`
}

// Active reports whether any port of the adapter is up.
func (r RDMADevice) Active() bool {
	for _, p := range r.Ports {
		if p.State == "ACTIVE" {
			return true
		}
	}
	return false
}
