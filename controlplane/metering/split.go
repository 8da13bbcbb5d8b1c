package metering

import (
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
)

// day is one UTC day.
const day = 24 * time.Hour

// Split cuts iv into usage records at UTC midnights. A released interval
// runs from bind to release; an open one (ReleasedAt nil) up to now, and
// with completeOnly only its days that ended by now are returned (the
// record of a day is final once the day is over). Times are truncated to
// the millisecond, so the records' durations add up to the interval's.
func Split(iv *controlplane.AllocationInterval, shareMilli int, now time.Time, completeOnly bool) []*controlplane.UsageRecord {
	start := iv.CreatedAt.UTC().Truncate(time.Millisecond)
	end := now.UTC().Truncate(time.Millisecond)
	if iv.ReleasedAt != nil {
		end, completeOnly = iv.ReleasedAt.UTC().Truncate(time.Millisecond), false
	}
	var out []*controlplane.UsageRecord
	for d := controlplane.Day(start); d.Before(end); d = d.Add(day) {
		next := d.Add(day)
		if completeOnly && next.After(end) {
			break
		}
		s, e := maxTime(start, d), minTime(end, next)
		if !e.After(s) {
			continue
		}
		out = append(out, record(iv, shareMilli, d, s, e))
	}
	return out
}

func record(iv *controlplane.AllocationInterval, shareMilli int, d, s, e time.Time) *controlplane.UsageRecord {
	a := &iv.Allocation
	return &controlplane.UsageRecord{IntervalID: a.ID, Day: d, Start: s, End: e, DurationMS: e.Sub(s).Milliseconds(),
		TaskID: a.TaskID, Attempt: a.Attempt, NodeID: a.NodeID, DevicePos: a.DevicePos, DeviceUUID: a.DeviceUUID,
		Vendor: a.Vendor, Model: a.Model, QoS: a.QoS, Tenant: a.Tenant, Project: a.Project, OwnerID: iv.OwnerID,
		Owner: iv.Owner, MemoryMiB: a.MemoryMiB, ComputeMilli: a.ComputeMilli, ShareMilli: shareMilli}
}

// ShareMilli is a slice's share of its device in thousandths: the larger of
// its compute share and its memory share (deviceMiB 0 = unknown, then the
// compute share alone), at most the whole device.
func ShareMilli(computeMilli int, memoryMiB, deviceMiB int64) int {
	share := int64(computeMilli)
	if deviceMiB > 0 {
		// Rounded up: a slice never counts for less than it holds.
		share = max(share, (memoryMiB*1000+deviceMiB-1)/deviceMiB)
	}
	return int(min(max(share, 0), 1000))
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
