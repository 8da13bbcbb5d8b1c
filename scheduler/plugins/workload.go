package plugins

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/heteroflow/heteroflow/scheduler/model"
)

// WorkloadSpec is one task shape of the target workload M with its
// popularity (share of all observed tasks, by count).
type WorkloadSpec struct {
	CPUMilli     int64 `json:"cpu_milli"`
	DeviceCount  int   `json:"device_count"`
	ComputeMilli int32 `json:"compute_milli"`
	MemoryMiB    int64 `json:"memory_mib"`
	// HostMemoryMiB is the mean host memory of the shape's tasks. It is not
	// part of the shape key (FGD groups by CPU and devices only), so the
	// literal FGD workload is unchanged; host-aware scoring uses it.
	HostMemoryMiB int64  `json:"host_memory_mib,omitempty"`
	Vendor        string `json:"vendor,omitempty"`
	// QoS is the shape's tier when the workload was built by tier
	// (BuildWorkloadByQoS): slicing rules then price a Gold shape by the
	// hardware partitions (MIG profile, vNPU template) a device can still
	// take. Empty in FGD's workload, which groups all tiers together.
	QoS    model.QoS `json:"qos,omitempty"`
	Models []string  `json:"models,omitempty"`
	Weight float64   `json:"weight"`
}

// BuildWorkload groups observed requests by shape (CPU, device count,
// compute, device memory, vendor/model filter) and keeps the most popular
// shapes until coverage (0 < coverage ≤ 1) of the tasks is reached, CPU-only
// tasks included (FGD's target workload). Weights are shares of all tasks.
// Ties in popularity are broken by the shape key, so the result is stable.
func BuildWorkload(reqs []model.Request, coverage float64) ([]WorkloadSpec, error) {
	return buildWorkload(reqs, coverage, false)
}

// BuildWorkloadByQoS is BuildWorkload with the tier as part of the shape:
// a Gold 1/7-device task and a Bronze one of the same size are different
// demands once partitions count (slicing rules).
func BuildWorkloadByQoS(reqs []model.Request, coverage float64) ([]WorkloadSpec, error) {
	return buildWorkload(reqs, coverage, true)
}

func buildWorkload(reqs []model.Request, coverage float64, byQoS bool) ([]WorkloadSpec, error) {
	if coverage <= 0 || coverage > 1 {
		return nil, fmt.Errorf("workload coverage must be in (0, 1], got %v", coverage)
	}
	type agg struct {
		spec WorkloadSpec
		key  string
		n    int
		mem  int64 // Σ host memory
	}
	byKey := map[string]*agg{}
	for i := range reqs {
		r := &reqs[i]
		milli := r.ComputeMilli
		if milli == 0 && r.DeviceCount > 0 {
			milli = int32(r.ComputePercent * 10)
		}
		s := WorkloadSpec{CPUMilli: r.CPUMilli, DeviceCount: r.DeviceCount, ComputeMilli: milli,
			MemoryMiB: r.MemoryMiB, Vendor: r.Vendor, Models: r.Models}
		if byQoS {
			s.QoS = r.QoS
		}
		k := strings.Join([]string{strconv.FormatInt(s.CPUMilli, 10), strconv.Itoa(s.DeviceCount),
			strconv.Itoa(int(s.ComputeMilli)), strconv.FormatInt(s.MemoryMiB, 10), s.Vendor, strings.Join(s.Models, "|")}, ",")
		if byQoS {
			k += "," + string(s.QoS) // FGD's keys (and so its tie order) stay as they were
		}
		a, ok := byKey[k]
		if !ok {
			a = &agg{spec: s, key: k}
			byKey[k] = a
		}
		a.n++
		a.mem += r.HostMemoryMiB
	}
	all := make([]*agg, 0, len(byKey))
	for _, a := range byKey {
		all = append(all, a)
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].n != all[j].n {
			return all[i].n > all[j].n
		}
		return all[i].key < all[j].key
	})
	total := float64(len(reqs))
	need := coverage * total
	var out []WorkloadSpec
	covered := 0.0
	for _, a := range all {
		if covered >= need-1e-9 {
			break
		}
		a.spec.Weight = float64(a.n) / total
		a.spec.HostMemoryMiB = a.mem / int64(a.n)
		out = append(out, a.spec)
		covered += float64(a.n)
	}
	return out, nil
}
