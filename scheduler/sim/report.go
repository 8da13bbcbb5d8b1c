package sim

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Stat is a mean and sample standard deviation over seeds.
type Stat struct {
	Mean float64 `json:"mean"`
	SD   float64 `json:"sd"`
}

// Report is the JSON the sim command prints (the format). A bucket
// no run reached is null.
type Report struct {
	AllocationPercent    map[string]*Stat `json:"allocation_percent"`
	FragmentationPercent map[string]*Stat `json:"fragmentation_percent"`
	FailedTasks          Stat             `json:"failed_tasks"`
	// FailedDemandPercent: the failed tasks' GPU demand, % of capacity, by
	// class (shared, whole, multi).
	FailedDemandPercent map[string]Stat `json:"failed_demand_percent"`
	PlacementsPerSecond Stat            `json:"placements_per_second"`
	Seeds               []uint64        `json:"seeds"`
	// ByVendor: allocation and fragmentation per vendor, % of that vendor's
	// devices (only for fleets of more than one vendor).
	ByVendor map[string]*VendorReport `json:"by_vendor,omitempty"`
}

// VendorReport is one vendor's share of a Report.
type VendorReport struct {
	Devices              int              `json:"devices"`
	AllocationPercent    map[string]*Stat `json:"allocation_percent"`
	FragmentationPercent map[string]*Stat `json:"fragmentation_percent"`
}

// Reported buckets (% of capacity arrived).
var (
	AllocBuckets = []int{90, 100, 130}
	FragBuckets  = []int{50, 80, 90}
)

// Replay runs every seed and aggregates the report.
func Replay(ctx context.Context, cfg Config, seeds []uint64) (Report, []RunResult, error) {
	runs := make([]RunResult, 0, len(seeds))
	for _, s := range seeds {
		if err := ctx.Err(); err != nil {
			return Report{}, nil, err
		}
		r, err := Run(ctx, cfg, s)
		if err != nil {
			return Report{}, nil, fmt.Errorf("seed %d: %w", s, err)
		}
		runs = append(runs, r)
	}
	return Aggregate(runs), runs, nil
}

// Aggregate turns per-seed results into the report.
func Aggregate(runs []RunResult) Report {
	rep := Report{AllocationPercent: map[string]*Stat{}, FragmentationPercent: map[string]*Stat{}}
	for _, r := range runs {
		rep.Seeds = append(rep.Seeds, r.Seed)
	}
	bucket := func(get func(RunResult) map[int]float64, b int) *Stat {
		var xs []float64
		for _, r := range runs {
			if v, ok := get(r)[b]; ok {
				xs = append(xs, v)
			}
		}
		if len(xs) == 0 {
			return nil
		}
		s := stat(xs)
		return &s
	}
	for _, b := range AllocBuckets {
		rep.AllocationPercent[strconv.Itoa(b)] = bucket(func(r RunResult) map[int]float64 { return r.Alloc }, b)
	}
	for _, b := range FragBuckets {
		rep.FragmentationPercent[strconv.Itoa(b)] = bucket(func(r RunResult) map[int]float64 { return r.Frag }, b)
	}
	for _, r := range runs {
		for name, vr := range r.ByVendor {
			if rep.ByVendor == nil {
				rep.ByVendor = map[string]*VendorReport{}
			}
			if rep.ByVendor[name] != nil {
				continue
			}
			out := &VendorReport{Devices: vr.Devices, AllocationPercent: map[string]*Stat{}, FragmentationPercent: map[string]*Stat{}}
			series := func(r RunResult, frag bool) map[int]float64 {
				if v := r.ByVendor[name]; v != nil {
					if frag {
						return v.Frag
					}
					return v.Alloc
				}
				return nil
			}
			for _, b := range AllocBuckets {
				out.AllocationPercent[strconv.Itoa(b)] = bucket(func(r RunResult) map[int]float64 { return series(r, false) }, b)
			}
			for _, b := range FragBuckets {
				out.FragmentationPercent[strconv.Itoa(b)] = bucket(func(r RunResult) map[int]float64 { return series(r, true) }, b)
			}
			rep.ByVendor[name] = out
		}
	}
	var failed, pps []float64
	for _, r := range runs {
		failed = append(failed, float64(r.Failed))
		pps = append(pps, r.PerSecond())
	}
	rep.FailedTasks, rep.PlacementsPerSecond = stat(failed), stat(pps)
	rep.FailedDemandPercent = map[string]Stat{}
	for _, class := range []string{ClassShared, ClassWhole, ClassMulti} {
		var xs []float64
		for _, r := range runs {
			xs = append(xs, r.FailedDemand[class])
		}
		rep.FailedDemandPercent[class] = stat(xs)
	}
	return rep
}

// stat: mean and sample s.d. (n−1), rounded to 4 decimals for reading.
func stat(xs []float64) Stat {
	if len(xs) == 0 {
		return Stat{}
	}
	m := 0.0
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	v := 0.0
	for _, x := range xs {
		v += (x - m) * (x - m)
	}
	sd := 0.0
	if len(xs) > 1 {
		sd = math.Sqrt(v / float64(len(xs)-1))
	}
	r := func(x float64) float64 { return math.Round(x*1e4) / 1e4 }
	return Stat{Mean: r(m), SD: r(sd)}
}

// ParseSeeds reads "42-51", "42,43,50" or "42".
func ParseSeeds(s string) ([]uint64, error) {
	var out []uint64
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if lo, hi, ok := strings.Cut(part, "-"); ok {
			a, err1 := strconv.ParseUint(strings.TrimSpace(lo), 10, 64)
			b, err2 := strconv.ParseUint(strings.TrimSpace(hi), 10, 64)
			if err1 != nil || err2 != nil || b < a || b-a > 10000 {
				return nil, fmt.Errorf("seed range %q must be LOW-HIGH with LOW ≤ HIGH (at most 10001 seeds)", part)
			}
			for x := a; x <= b; x++ {
				out = append(out, x)
			}
			continue
		}
		x, err := strconv.ParseUint(part, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("seed %q is not a non-negative integer", part)
		}
		out = append(out, x)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no seeds in %q", s)
	}
	return out, nil
}
