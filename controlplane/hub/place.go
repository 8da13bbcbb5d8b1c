package hub

import (
	"slices"

	"github.com/heteroflow/heteroflow/controlplane/apitypes"
)

// Cluster-level placement: each candidate member is scored from what its
// summary APIs say now; the highest score wins.
//
//	fits     online devices of the requested vendor/model that can take one
//	         of the task's devices now (Gold: a whole free device; Silver and
//	         Bronze: the compute share and memory free)
//	score    100 × (0.6 × free + 0.3 × queue + 0.1 × unfragmented), where
//	         free = fits ÷ matching devices, queue = 1 ÷ (1 + queue depth),
//	         unfragmented = 1 − the member's fragmentation score
//
// A member whose fits fall short of the task's device count only competes
// when no member can start the task now: then the one with matching
// devices and the shortest queue takes it (it waits there). A member with
// too few matching devices never takes it.

// Weights of the score's terms (they sum to 1, so the score is in [0,100]).
const (
	weightFree  = 0.6 // capacity first: a task that can start now beats one that waits
	weightQueue = 0.3 // then the shorter queue
	weightFrag  = 0.1 // then the less fragmented member
)

// demand is what a task asks of one member.
type demand struct {
	devices        int
	vendor         string
	models         []string
	qos            string
	computePercent int
	memoryMiB      int64
}

func demandOf(spec apitypes.TaskSpecJSON) demand {
	d := demand{devices: spec.DeviceCount, vendor: spec.Vendor, models: spec.Models, qos: string(spec.QoS),
		computePercent: spec.ComputePercent, memoryMiB: int64(spec.MemoryMiB)}
	if d.computePercent <= 0 {
		d.computePercent = 100 // no share asked: a whole device's compute
	}
	if d.qos == "" {
		d.qos = "bronze"
	}
	return d
}

func (d demand) matches(dev apitypes.DeviceSlicesJSON) bool {
	if d.vendor != "" && dev.Vendor != d.vendor {
		return false
	}
	return len(d.models) == 0 || slices.Contains(d.models, dev.Model)
}

// fitsNow reports whether dev can take one of the task's devices now.
func (d demand) fitsNow(dev apitypes.DeviceSlicesJSON) bool {
	if !dev.Online {
		return false
	}
	freeMiB := dev.MemoryMiB - dev.AllocatedMiB
	if d.qos == "gold" {
		return dev.State == "free" && dev.AllocatedMiB == 0
	}
	return dev.FreePercent >= d.computePercent && freeMiB >= d.memoryMiB
}

// candidate is one member's state at placement time (nil state: it did
// not answer).
type candidate struct {
	name  string
	state *memberState
	err   error
}

// scoreAll scores every candidate; the best eligible one comes first.
func scoreAll(d demand, cands []candidate) []apitypes.ClusterScoreJSON {
	out := make([]apitypes.ClusterScoreJSON, 0, len(cands))
	for _, c := range cands {
		out = append(out, score(d, c))
	}
	slices.SortStableFunc(out, func(a, b apitypes.ClusterScoreJSON) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return 0
	})
	return out
}

// Reasons a member is not eligible (shown in the placement record).
const (
	reasonUnreachable = "unreachable"
	reasonNoDevices   = "too few devices of the requested vendor/model"
	reasonBusy        = "no free capacity now; the task would wait"
	reasonNoNodes     = "no nodes"
)

func score(d demand, c candidate) apitypes.ClusterScoreJSON {
	s := apitypes.ClusterScoreJSON{Cluster: c.name}
	if c.state == nil {
		s.Reason = reasonUnreachable
		if c.err != nil {
			s.Reason += ": " + c.err.Error()
		}
		s.Score = -1
		return s
	}
	sum := c.state.summary
	s.QueueDepth = sum.QueueDepth
	queue := 1 / (1 + float64(sum.QueueDepth))
	unfragmented := 1 - min(max(sum.Fragmentation, 0), 1)
	if d.devices == 0 {
		// CPU only: every member can hold it; the queue decides.
		s.Fits, s.Matching = sum.NodesOnline, sum.NodesTotal
		switch {
		case sum.NodesTotal == 0:
			s.Reason, s.Score = reasonNoNodes, -1
			return s
		case sum.NodesOnline == 0:
			s.Reason, s.Score = reasonBusy, round2(queue*0.99)
			return s
		}
		s.Score = round2(100 * (weightFree + weightQueue*queue + weightFrag*unfragmented))
		return s
	}
	for _, dev := range c.state.devices {
		if !d.matches(dev) {
			continue
		}
		s.Matching++
		if d.fitsNow(dev) {
			s.Fits++
		}
	}
	switch {
	case s.Matching < d.devices:
		s.Reason, s.Score = reasonNoDevices, -1
	case s.Fits < d.devices:
		// Waits there: ranked below every member that can start it now,
		// by queue alone (scores in [0, 1)).
		s.Reason, s.Score = reasonBusy, round2(queue*0.99)
	default:
		free := float64(s.Fits) / float64(s.Matching)
		s.Score = round2(100 * (weightFree*free + weightQueue*queue + weightFrag*unfragmented))
		// Always above a member where the task would wait.
		s.Score = max(s.Score, 1)
	}
	return s
}

func round2(v float64) float64 { return float64(int64(v*100+0.5)) / 100 }
