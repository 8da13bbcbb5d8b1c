package metering

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/heteroflow/heteroflow/controlplane"
)

// Querier is the PromQL the meter reads measured usage through
// (controlplane/metricstore/query.Querier: the embedded TSDB or the remote
// store).
type Querier interface {
	Instant(ctx context.Context, expr string, ts time.Time) (model.Vector, error)
}

// Device metrics measured usage reads: the receivers' hw.gpu.* series as
// the metrics store names them, labelled by host_name, hw_vendor, hw_index.
const (
	utilMetric = "hw_gpu_utilization_ratio"
	memMetric  = "hw_gpu_memory_usage_bytes"
)

// measureQuery averages a device's utilisation and memory in use over the
// window ending at the evaluation time, as two samples told apart by "q".
// The agent's collector names its node by id in host_name (hosts lists
// the node's hostname too, for collectors set up by hand).
func measureQuery(hosts []string, vendor string, index int, window time.Duration) string {
	alt := make([]string, len(hosts))
	for i, h := range hosts {
		alt[i] = regexp.QuoteMeta(h)
	}
	sel := `{host_name=~` + strconv.Quote(strings.Join(alt, "|")) + `,hw_vendor=` + strconv.Quote(vendor) +
		`,hw_index="` + strconv.Itoa(index) + `"}`
	w := "[" + strconv.FormatInt(window.Milliseconds(), 10) + "ms]"
	return `label_replace(avg(avg_over_time(` + utilMetric + sel + w + `)), "q", "util", "", "") or ` +
		`label_replace(avg(avg_over_time(` + memMetric + sel + w + `)), "q", "mem", "", "")`
}

// measurer computes the measured usage of records from the device metrics.
// The vendor CLIs report device figures, not per-process ones, so over
// every stretch of a record in which the same slices shared its device, the
// device's average utilisation is shared among them in proportion to their
// compute and its memory in use in proportion to their memory; a slice is
// never credited with more than it holds.
type measurer struct {
	q     Querier
	hosts map[string]string // node id → hostname
	// ivs are the intervals of the records' nodes that overlap them, by
	// node, vendor and device index.
	ivs map[devKey][]*controlplane.AllocationInterval
}

func (s *Service) newMeasurer(ctx context.Context, hosts map[string]string, recs []*controlplane.UsageRecord) (*measurer, error) {
	if s.querier == nil || len(recs) == 0 {
		return nil, nil
	}
	nodes := map[string]bool{}
	from, to := recs[0].Start, recs[0].End
	for _, r := range recs {
		nodes[r.NodeID] = true
		from, to = minTime(from, r.Start), maxTime(to, r.End)
	}
	list := make([]string, 0, len(nodes))
	for n := range nodes {
		list = append(list, n)
	}
	sort.Strings(list)
	ivs, err := s.store.ListDeviceIntervals(ctx, list, from, to)
	if err != nil {
		return nil, fmt.Errorf("list device intervals: %w", err)
	}
	m := &measurer{q: s.querier, hosts: hosts, ivs: map[devKey][]*controlplane.AllocationInterval{}}
	for _, iv := range ivs {
		k := devKey{iv.NodeID, iv.Vendor, iv.DeviceIndex}
		m.ivs[k] = append(m.ivs[k], iv)
	}
	return m, nil
}

// measure fills r.Measured. A failed query leaves the stretch unmeasured
// (and is returned, so the pass can log it) rather than losing the record.
func (m *measurer) measure(ctx context.Context, r *controlplane.UsageRecord, vendorIndex int, now time.Time) error {
	hosts := []string{r.NodeID}
	if h := m.hosts[r.NodeID]; h != "" && h != r.NodeID {
		hosts = append(hosts, h)
	}
	host := r.NodeID
	k := devKey{r.NodeID, r.Vendor, vendorIndex}
	start, end := r.Start, r.End
	// Stretches: cut the record wherever another slice on the device was
	// bound or released.
	cuts := []time.Time{start, end}
	for _, iv := range m.ivs[k] {
		for _, t := range []time.Time{iv.CreatedAt, ivEnd(iv, now)} {
			if t.After(start) && t.Before(end) {
				cuts = append(cuts, t.Truncate(time.Millisecond))
			}
		}
	}
	sort.Slice(cuts, func(i, j int) bool { return cuts[i].Before(cuts[j]) })
	var firstErr error
	for i := 1; i < len(cuts); i++ {
		a, b := cuts[i-1], cuts[i]
		ms := b.Sub(a).Milliseconds()
		if ms <= 0 {
			continue
		}
		var compute, mem int64 // what all slices on the device hold over [a, b)
		for _, iv := range m.ivs[k] {
			if iv.CreatedAt.Before(b) && ivEnd(iv, now).After(a) {
				compute += int64(iv.ComputeMilli)
				mem += iv.MemoryMiB
			}
		}
		vec, err := m.q.Instant(ctx, measureQuery(hosts, r.Vendor, vendorIndex, b.Sub(a)), b)
		if err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("measure interval %d on %s: %w", r.IntervalID, host, err)
			}
			continue
		}
		util, used := math.NaN(), math.NaN()
		for _, smp := range vec {
			switch smp.Metric["q"] {
			case "util":
				util = float64(smp.Value)
			case "mem":
				used = float64(smp.Value)
			}
		}
		if math.IsNaN(util) || math.IsNaN(used) || math.IsInf(util, 0) || math.IsInf(used, 0) {
			continue // no samples for this stretch: not measured
		}
		r.Measured.MS += ms
		r.Measured.ComputeMilliMS += attribute(util*1000, int64(r.ComputeMilli), compute, ms)
		r.Measured.MemoryMiBMS += attribute(used/(1<<20), r.MemoryMiB, mem, ms)
	}
	return firstErr
}

// attribute is own's part of a device figure shared in proportion among
// holders holding total, at most own, over ms milliseconds.
func attribute(device float64, own, total, ms int64) int64 {
	if own <= 0 || total <= 0 || !(device > 0) {
		return 0
	}
	v := min(device*float64(own)/float64(total), float64(own))
	return int64(math.Round(v * float64(ms)))
}

// ivEnd is when an interval ended (now while it is held).
func ivEnd(iv *controlplane.AllocationInterval, now time.Time) time.Time {
	if iv.ReleasedAt != nil {
		return *iv.ReleasedAt
	}
	return now
}
