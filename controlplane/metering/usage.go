package metering

import (
	"github.com/heteroflow/heteroflow/controlplane"
)

// UsageTotals is summed usage as exact integers (milliseconds times units), so
// sums never drift; the hours shown are derived from them.
type UsageTotals struct {
	// SliceMS is the time slices were held, in milliseconds.
	SliceMS int64 `json:"slice_ms"`
	// DeviceMilliMS is Σ duration × share (thousandths of a device).
	DeviceMilliMS int64 `json:"device_milli_ms"`
	// MemoryMiBMS is Σ duration × device memory held (MiB).
	MemoryMiBMS int64 `json:"memory_mib_ms"`
	// ComputeMilliMS is Σ duration × compute (thousandths of a device).
	ComputeMilliMS int64 `json:"compute_milli_ms"`
	// MeasuredMS is the part of SliceMS covered by device metrics;
	// MeasuredComputeMilliMS and MeasuredMemoryMiBMS what the slices
	// actually used over it; CoveredComputeMilliMS and CoveredMemoryMiBMS
	// what they held over it (the denominators of efficiency).
	MeasuredMS             int64 `json:"measured_ms"`
	MeasuredComputeMilliMS int64 `json:"measured_compute_milli_ms"`
	MeasuredMemoryMiBMS    int64 `json:"measured_memory_mib_ms"`
	CoveredComputeMilliMS  int64 `json:"covered_compute_milli_ms"`
	CoveredMemoryMiBMS     int64 `json:"covered_memory_mib_ms"`
}

func (u *UsageTotals) add(r *controlplane.UsageRecord) {
	u.SliceMS += r.DurationMS
	u.DeviceMilliMS += r.DurationMS * int64(r.ShareMilli)
	u.MemoryMiBMS += r.DurationMS * r.MemoryMiB
	u.ComputeMilliMS += r.DurationMS * int64(r.ComputeMilli)
	u.MeasuredMS += r.Measured.MS
	u.MeasuredComputeMilliMS += r.Measured.ComputeMilliMS
	u.MeasuredMemoryMiBMS += r.Measured.MemoryMiBMS
	u.CoveredComputeMilliMS += r.Measured.MS * int64(r.ComputeMilli)
	u.CoveredMemoryMiBMS += r.Measured.MS * r.MemoryMiB
}

// sum adds one row of store sums.
func (u *UsageTotals) sum(s *controlplane.UsageSum) {
	u.plus(UsageTotals{SliceMS: s.SliceMS, DeviceMilliMS: s.DeviceMilliMS, MemoryMiBMS: s.MemoryMiBMS,
		ComputeMilliMS: s.ComputeMilliMS, MeasuredMS: s.Measured.MS, MeasuredComputeMilliMS: s.Measured.ComputeMilliMS,
		MeasuredMemoryMiBMS: s.Measured.MemoryMiBMS, CoveredComputeMilliMS: s.CoveredComputeMilliMS,
		CoveredMemoryMiBMS: s.CoveredMemoryMiBMS})
}

func (u *UsageTotals) plus(o UsageTotals) {
	u.SliceMS += o.SliceMS
	u.DeviceMilliMS += o.DeviceMilliMS
	u.MemoryMiBMS += o.MemoryMiBMS
	u.ComputeMilliMS += o.ComputeMilliMS
	u.MeasuredMS += o.MeasuredMS
	u.MeasuredComputeMilliMS += o.MeasuredComputeMilliMS
	u.MeasuredMemoryMiBMS += o.MeasuredMemoryMiBMS
	u.CoveredComputeMilliMS += o.CoveredComputeMilliMS
	u.CoveredMemoryMiBMS += o.CoveredMemoryMiBMS
}

const msPerHour = 3600 * 1000

// UsageHours are the derived quantities of a UsageTotals.
type UsageHours struct {
	SliceHours          float64 `json:"slice_hours"`
	DeviceHours         float64 `json:"device_hours"`
	MemoryGiBHours      float64 `json:"memory_gib_hours"`
	ComputePercentHours float64 `json:"compute_percent_hours"`
	// Measured quantities: hours covered by device metrics, the compute-%-
	// hours and device-memory GiB-hours actually used over them.
	MeasuredHours               float64 `json:"measured_hours"`
	MeasuredComputePercentHours float64 `json:"measured_compute_percent_hours"`
	MeasuredMemoryGiBHours      float64 `json:"measured_memory_gib_hours"`
}

// Efficiency is measured over allocated usage, over the time covered by
// device metrics: 1 = the slices used all they held.
type Efficiency struct {
	Compute float64 `json:"compute"`
	Memory  float64 `json:"memory"`
}

// Efficiency is nil when no part of u was measured.
func (u UsageTotals) Efficiency() *Efficiency {
	if u.MeasuredMS == 0 {
		return nil
	}
	e := &Efficiency{}
	if u.CoveredComputeMilliMS > 0 {
		e.Compute = float64(u.MeasuredComputeMilliMS) / float64(u.CoveredComputeMilliMS)
	}
	if u.CoveredMemoryMiBMS > 0 {
		e.Memory = float64(u.MeasuredMemoryMiBMS) / float64(u.CoveredMemoryMiBMS)
	}
	return e
}

// Hours converts exact sums to hours.
func (u UsageTotals) Hours() UsageHours {
	return UsageHours{
		SliceHours:          float64(u.SliceMS) / msPerHour,
		DeviceHours:         float64(u.DeviceMilliMS) / 1000 / msPerHour,
		MemoryGiBHours:      float64(u.MemoryMiBMS) / 1024 / msPerHour,
		ComputePercentHours: float64(u.ComputeMilliMS) / 10 / msPerHour,

		MeasuredHours:               float64(u.MeasuredMS) / msPerHour,
		MeasuredComputePercentHours: float64(u.MeasuredComputeMilliMS) / 10 / msPerHour,
		MeasuredMemoryGiBHours:      float64(u.MeasuredMemoryMiBMS) / 1024 / msPerHour,
	}
}

// Quantities are one record's hours.
func Quantities(r *controlplane.UsageRecord) UsageHours {
	var u UsageTotals
	u.add(r)
	return u.Hours()
}
