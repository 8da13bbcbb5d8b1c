package controlplane

import (
	"context"
	"time"
)

// UsageMeasured is what a usage record's slice actually used while it was
// held, read from the device metrics (hw_gpu_utilization_ratio,
// hw_gpu_memory_usage_bytes) when the record is metered and stored with it,
// so reports never query metrics and never change afterwards. The vendor
// CLIs report device figures, not per-process ones, so a device's figure is
// shared among the slices on it in proportion to their allocations, and a
// slice is never credited with more than it holds.
type UsageMeasured struct {
	// MS is the part of the record covered by metric samples, in
	// milliseconds (0: no samples, nothing measured).
	MS int64
	// ComputeMilliMS is Σ duration × device utilisation attributed to the
	// slice, in thousandths of a device (at most ComputeMilli × MS).
	ComputeMilliMS int64
	// MemoryMiBMS is Σ duration × device memory in use attributed to the
	// slice, in MiB (at most MemoryMiB × MS).
	MemoryMiBMS int64
}

// Usage sum sets: which grouping a UsageSum row belongs to.
const (
	// SumDaily rows are keyed by day, vendor, model and QoS.
	SumDaily = "daily"
	// SumTenant, SumProject and SumUser rows are keyed by price segment,
	// vendor, model and QoS and the scope (tenant; tenant+project; owner).
	SumTenant  = "tenant"
	SumProject = "project"
	SumUser    = "user"
	// SumTask rows are keyed by price segment, vendor, model, QoS and task.
	SumTask = "task"
)

// UsageSumRequest asks for usage sums of a filter. Cuts are the days that
// start price segments inside [From, To): segment 0 runs from From to
// Cuts[0], segment i from Cuts[i-1] to Cuts[i]. Prices are constant within
// a segment, so summing by segment loses nothing a report prices.
type UsageSumRequest struct {
	Filter UsageFilter
	Cuts   []time.Time
	// Rates rank tasks for SumTask: a task's weight is Σ over its rows of
	// the usage times the rate of its (segment, vendor, model, QoS).
	Rates []UsageRate
	// Top bounds the SumTask rows to the Top heaviest tasks (ties by
	// device usage, then task id), plus every task in Tasks.
	Top   int
	Tasks []int64
	// SkipTasks leaves out the SumTask rows; TasksOnly returns only them.
	SkipTasks, TasksOnly bool
}

// UsageRate is the price of one unit of each quantity for one segment and
// class, per millisecond (Bronze discounts already applied).
type UsageRate struct {
	Segment        int
	Vendor, Model  string
	QoS            QoS
	DeviceMilliMS  float64
	MemoryMiBMS    float64
	ComputeMilliMS float64
}

// UsageSum is one row of summed usage.
type UsageSum struct {
	Set     string
	Day     time.Time // SumDaily only
	Segment int
	Vendor  string
	Model   string
	QoS     QoS
	Tenant  string // SumTenant, SumProject; SumUser and SumTask: one of the owner's tenants
	Project string // SumProject; SumTask: the task's
	Owner   string // SumUser, SumTask
	TaskID  int64  // SumTask
	// Exact sums as in UsageRecord: Σ duration, Σ duration × share,
	// Σ duration × MiB, Σ duration × compute.
	SliceMS, DeviceMilliMS, MemoryMiBMS, ComputeMilliMS int64
	// Measured sums, and the allocated sums over the measured part
	// (Σ Measured.MS × ComputeMilli, Σ Measured.MS × MemoryMiB).
	Measured                                  UsageMeasured
	CoveredComputeMilliMS, CoveredMemoryMiBMS int64
}

// UsageSumStore sums usage in the store, so a report reads a few hundred
// rows rather than every record.
type UsageSumStore interface {
	// SumUsage returns the sums of req.Filter for every set.
	SumUsage(ctx context.Context, req UsageSumRequest) ([]*UsageSum, error)
	// ListDeviceIntervals returns the intervals (released and still held)
	// of the nodes that overlap [from, to): what shared their devices.
	ListDeviceIntervals(ctx context.Context, nodes []string, from, to time.Time) ([]*AllocationInterval, error)
}
