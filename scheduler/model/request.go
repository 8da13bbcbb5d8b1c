package model

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// QoS is the isolation tier of a request (ARCHITECTURE.md): gold takes a
// hardware partition or a whole device, silver a driver-limited slice, bronze
// a software-shared slice that may overcommit memory.
type QoS string

const (
	QoSGold   QoS = "gold"
	QoSSilver QoS = "silver"
	QoSBronze QoS = "bronze"
)

// Request is what the scheduler places. It mirrors controlplane.TaskSpec's
// scheduling fields (the server maps one onto the other); JSON names match
// the REST contract so the simulator reads the same task files.
type Request struct {
	ID             string   `json:"name"`
	DeviceCount    int      `json:"device_count"`
	MemoryMiB      int64    `json:"memory_mib"`      // per device
	ComputePercent float64  `json:"compute_percent"` // per device, 0 < x ≤ 100
	Vendor         string   `json:"vendor,omitempty"`
	Models         []string `json:"models,omitempty"`         // allowed models; empty = any
	ExcludeModels  []string `json:"exclude_models,omitempty"` // never these
	QoS            QoS      `json:"qos,omitempty"`
	Priority       int      `json:"priority,omitempty"`
	CPUMilli       int64    `json:"cpu_milli,omitempty"`
	HostMemoryMiB  int64    `json:"host_memory_mib,omitempty"`
	RDMA           bool     `json:"rdma,omitempty"`
	Gang           string   `json:"gang,omitempty"`
	GangSize       int      `json:"gang_size,omitempty"`
	// Tenant is the task's tenant, for node pools dedicated to tenants;
	// PoolGen is the generation of those pools' rules (0: no pools exist,
	// and the tenant does not split shapes). See SetPool.
	Tenant  string `json:"tenant,omitempty"`
	PoolGen uint64 `json:"-"`
	// BestEffort lets a Silver request take a sharing device whose node
	// enforces no Silver limits (slice isolation IsolationBestEffort). The
	// control plane sets it only on a second pass, after no enforcing
	// device fitted, and only for tasks that allow it.
	BestEffort bool `json:"best_effort,omitempty"`

	// ComputeMilli is ComputePercent in milli-devices, set by Normalize.
	ComputeMilli int32 `json:"-"`
	shapeKey     string
}

// Normalize validates r, fills defaults (bronze; gold without compute means a
// whole device) and derives ComputeMilli. It must run before scheduling.
func (r *Request) Normalize() error {
	if r.QoS == "" {
		r.QoS = QoSBronze
	}
	switch {
	case r.QoS != QoSGold && r.QoS != QoSSilver && r.QoS != QoSBronze:
		return fmt.Errorf("request %s: qos must be gold, silver or bronze, not %q", r.ID, r.QoS)
	case r.DeviceCount < 0 || r.DeviceCount > MaxDevicesPerNode:
		return fmt.Errorf("request %s: device_count must be between 0 and %d", r.ID, MaxDevicesPerNode)
	case r.MemoryMiB < 0 || r.CPUMilli < 0 || r.HostMemoryMiB < 0:
		return fmt.Errorf("request %s: memory_mib, cpu_milli and host_memory_mib must not be negative", r.ID)
	case r.DeviceCount == 0 && (r.MemoryMiB != 0 || r.ComputePercent != 0):
		return fmt.Errorf("request %s: memory_mib and compute_percent need device_count ≥ 1", r.ID)
	case r.ComputePercent < 0 || r.ComputePercent > 100 || math.IsNaN(r.ComputePercent):
		return fmt.Errorf("request %s: compute_percent must be between 0 and 100", r.ID)
	case r.Gang != "" && r.GangSize < 1:
		return fmt.Errorf("request %s: gang_size must be at least 1 when gang is set", r.ID)
	case r.BestEffort && r.QoS != QoSSilver:
		return fmt.Errorf("request %s: best_effort applies to silver only", r.ID)
	}
	if r.DeviceCount > 0 && r.ComputePercent == 0 {
		// A device request without a compute share asks for the whole device
		// (gold) or is memory-only sharing (silver/bronze take 0 compute).
		if r.QoS == QoSGold || r.MemoryMiB == 0 {
			r.ComputePercent = 100
		}
	}
	r.ComputeMilli = int32(math.Round(r.ComputePercent * 10))
	if r.DeviceCount > 0 && r.ComputeMilli == 0 && r.MemoryMiB == 0 {
		return fmt.Errorf("request %s: a device request needs compute_percent or memory_mib", r.ID)
	}
	r.shapeKey = r.buildShapeKey()
	return nil
}

// ShapeKey identifies every field that decides feasibility and score: two
// requests with the same key are interchangeable for the scheduler. The
// framework memoises per (shape, node) on it.
func (r *Request) ShapeKey() string { return r.shapeKey }

func (r *Request) buildShapeKey() string {
	var b strings.Builder
	b.Grow(64)
	for _, v := range []int64{int64(r.DeviceCount), r.MemoryMiB, int64(r.ComputeMilli), r.CPUMilli, r.HostMemoryMiB} {
		b.WriteString(strconv.FormatInt(v, 10))
		b.WriteByte(',')
	}
	b.WriteString(string(r.QoS))
	b.WriteByte(',')
	b.WriteString(r.Vendor)
	b.WriteByte(',')
	b.WriteString(strings.Join(r.Models, "|"))
	b.WriteByte(',')
	b.WriteString(strings.Join(r.ExcludeModels, "|"))
	if r.RDMA {
		b.WriteString(",rdma")
	}
	if r.BestEffort {
		b.WriteString(",best-effort")
	}
	if r.PoolGen != 0 {
		// Node pools make feasibility depend on the tenant and on the
		// pools' rules: both are part of the shape while pools exist.
		b.WriteString(",pool=")
		b.WriteString(strconv.FormatUint(r.PoolGen, 10))
		b.WriteByte('/')
		b.WriteString(r.Tenant)
	}
	return b.String()
}

// SetPool records the tenant and the pools' rule generation on a
// normalised request and refreshes its shape key.
func (r *Request) SetPool(tenant string, gen uint64) {
	r.Tenant, r.PoolGen = tenant, gen
	r.shapeKey = r.buildShapeKey()
}

// ModelAllowed reports whether the request's vendor/model filters admit a
// device of this vendor and model.
func (r *Request) ModelAllowed(vendor, model string) bool {
	if r.Vendor != "" && !strings.EqualFold(r.Vendor, vendor) {
		return false
	}
	for _, m := range r.ExcludeModels {
		if strings.EqualFold(m, model) {
			return false
		}
	}
	if len(r.Models) == 0 {
		return true
	}
	for _, m := range r.Models {
		if strings.EqualFold(m, model) {
			return true
		}
	}
	return false
}
