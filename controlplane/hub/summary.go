package hub

import (
	"context"
	"errors"
	"net/http"
	"sort"

	"github.com/heteroflow/heteroflow/controlplane/apitypes"
	"github.com/heteroflow/heteroflow/controlplane/client"
)

// memberState is what one read of a member's summary APIs returns: the
// view the Clusters page shows and the devices placement scores.
type memberState struct {
	summary apitypes.ClusterSummaryJSON
	devices []apitypes.DeviceSlicesJSON
}

// readState reads a member's health, scheduler summary, devices, firing
// alerts and this month's usage.
func readState(ctx context.Context, c *client.Client) (*memberState, error) {
	out := &memberState{}
	s := &out.summary
	s.Health = "ok"
	if _, err := c.HealthAuthed(ctx); err != nil {
		var ae *client.Error
		if !errors.As(err, &ae) || ae.Status != http.StatusServiceUnavailable {
			return nil, err
		}
		s.Health = "degraded"
	}
	sum, err := c.SchedulerSummary(ctx)
	if err != nil {
		return nil, err
	}
	devs, err := c.Devices(ctx)
	if err != nil {
		return nil, err
	}
	if s.AlertsFiring, err = c.FiringAlerts(ctx); err != nil {
		return nil, err
	}
	usage, err := c.MonthUsage(ctx)
	if err != nil {
		return nil, err
	}
	s.NodesTotal, s.NodesOnline = sum.Nodes.Total, sum.Nodes.Online
	s.DevicesTotal, s.DevicesOnline = sum.GPUs.Total, sum.GPUs.Online
	s.MemoryMiB, s.FreeMemoryMiB = sum.MemoryMiB.Total, sum.MemoryMiB.Free
	s.Utilization, s.Fragmentation = sum.SliceUtilization, sum.Fragmentation.Score
	s.QueueDepth = sum.Tasks["submitted"] + sum.Tasks["queued"]
	s.Running = sum.Tasks["scheduled"] + sum.Tasks["running"]
	s.UsageHours, s.UsageCost, s.Currency = usage.Total.Hours.DeviceHours, usage.Total.Cost, usage.Currency
	s.Devices = groupDevices(devs)
	for _, g := range s.Devices {
		s.DevicesFree += g.Free
	}
	out.devices = devs
	return out, nil
}

// readSummary is readState's view alone.
func readSummary(ctx context.Context, c *client.Client) (*apitypes.ClusterSummaryJSON, error) {
	st, err := readState(ctx, c)
	if err != nil {
		return nil, err
	}
	return &st.summary, nil
}

// groupDevices counts devices by vendor and model with their free capacity.
func groupDevices(devs []apitypes.DeviceSlicesJSON) []apitypes.DeviceGroupJSON {
	type key struct{ vendor, model string }
	groups := map[key]*apitypes.DeviceGroupJSON{}
	for _, d := range devs {
		k := key{d.Vendor, d.Model}
		g := groups[k]
		if g == nil {
			g = &apitypes.DeviceGroupJSON{Vendor: d.Vendor, Model: d.Model}
			groups[k] = g
		}
		g.Total++
		if !d.Online {
			continue
		}
		g.Online++
		if d.State == "free" {
			g.Free++
		}
		g.FreeMiB += max(d.MemoryMiB-d.AllocatedMiB, 0)
		g.FreeComputePercent += d.FreePercent
	}
	out := make([]apitypes.DeviceGroupJSON, 0, len(groups))
	for _, g := range groups {
		out = append(out, *g)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Vendor != out[j].Vendor {
			return out[i].Vendor < out[j].Vendor
		}
		return out[i].Model < out[j].Model
	})
	return out
}
