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
}

func (u *UsageTotals) add(r *controlplane.UsageRecord) {
	u.SliceMS += r.DurationMS
	u.DeviceMilliMS += r.DurationMS * int64(r.ShareMilli)
	u.MemoryMiBMS += r.DurationMS * r.MemoryMiB
	u.ComputeMilliMS += r.DurationMS * int64(r.ComputeMilli)
}

func (u *UsageTotals) plus(o UsageTotals) {
	u.SliceMS += o.SliceMS
	u.DeviceMilliMS += o.DeviceMilliMS
	u.MemoryMiBMS += o.MemoryMiBMS
	u.ComputeMilliMS += o.ComputeMilliMS
}

const msPerHour = 3600 * 1000

// UsageHours are the derived quantities of a UsageTotals.
type UsageHours struct {
	SliceHours          float64 `json:"slice_hours"`
	DeviceHours         float64 `json:"device_hours"`
	MemoryGiBHours      float64 `json:"memory_gib_hours"`
	ComputePercentHours float64 `json:"compute_percent_hours"`
}

// Hours converts exact sums to hours.
func (u UsageTotals) Hours() UsageHours {
	return UsageHours{
		SliceHours:          float64(u.SliceMS) / msPerHour,
		DeviceHours:         float64(u.DeviceMilliMS) / 1000 / msPerHour,
		MemoryGiBHours:      float64(u.MemoryMiBMS) / 1024 / msPerHour,
		ComputePercentHours: float64(u.ComputeMilliMS) / 10 / msPerHour,
	}
}

// Quantities are one record's hours.
func Quantities(r *controlplane.UsageRecord) UsageHours {
	var u UsageTotals
	u.add(r)
	return u.Hours()
}
