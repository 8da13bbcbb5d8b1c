package runner

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/heteroflow/heteroflow/agent/protocol"
)

// Bronze memory policing: Bronze slices overcommit device memory, so when a
// device runs short the agent stops the Bronze task that exceeds its share
// the most — never a Gold or Silver one — and reports it failed, so the
// server requeues it when its retries allow. The figures come from the
// vendor CLI: per-process device memory (nvidia-smi --query-compute-apps)
// and the device's total and used memory (--query-gpu).

// ProcMemory is one process's memory on one device.
type ProcMemory struct {
	PID       int
	Device    string // GPU UUID
	MemoryMiB int64
}

// DeviceMemory is one device's total and used memory.
type DeviceMemory struct {
	Device   string // GPU UUID
	TotalMiB int64
	UsedMiB  int64
}

// PolicedTask is a running task as the policy sees it.
type PolicedTask struct {
	TaskID  int64
	Attempt int
	QoS     string
	PIDs    []int                  // the task's process group
	Devices []protocol.DeviceSlice // with UUID and MemoryMiB (its share)
}

// Eviction is the policy's decision for one device.
type Eviction struct {
	TaskID   int64
	Attempt  int
	Device   string
	UsedMiB  int64
	ShareMiB int64
	FreeMiB  int64
}

// Reason is the eviction as the task's failure reason says it.
func (e Eviction) Reason() string {
	return fmt.Sprintf("bronze memory policing: used %d MiB on %s, over its share of %d MiB, while the device had %d MiB free",
		e.UsedMiB, e.Device, e.ShareMiB, e.FreeMiB)
}

// ShortFraction is when a device "runs short": less free memory than this
// share of its total.
const ShortFraction = 0.05

// Police decides, for every device that runs short, which Bronze task to
// stop: the one furthest over its share (used − share > 0). At most one
// task per device per round; a task is stopped once even when it is over
// on several devices.
func Police(devs []DeviceMemory, procs []ProcMemory, tasks []PolicedTask) []Eviction {
	owner := map[int]int{} // pid → task position
	for i, t := range tasks {
		for _, pid := range t.PIDs {
			owner[pid] = i
		}
	}
	used := map[[2]string]int64{} // (task position, device) → MiB
	for _, p := range procs {
		if i, ok := owner[p.PID]; ok {
			used[[2]string{strconv.Itoa(i), p.Device}] += p.MemoryMiB
		}
	}
	var out []Eviction
	stopped := map[int]bool{}
	sort.Slice(devs, func(a, b int) bool { return devs[a].Device < devs[b].Device })
	for _, d := range devs {
		free := d.TotalMiB - d.UsedMiB
		if d.TotalMiB <= 0 || float64(free) >= ShortFraction*float64(d.TotalMiB) {
			continue
		}
		best, bestOver := -1, int64(0)
		var bestShare, bestUsed int64
		for i, t := range tasks {
			if t.QoS != "bronze" && t.QoS != "" || stopped[i] {
				continue
			}
			share, on := int64(0), false
			for _, s := range t.Devices {
				if s.UUID == d.Device {
					share, on = int64(s.MemoryMiB), true
				}
			}
			if !on {
				continue
			}
			u := used[[2]string{strconv.Itoa(i), d.Device}]
			if over := u - share; over > bestOver {
				best, bestOver, bestShare, bestUsed = i, over, share, u
			}
		}
		if best >= 0 {
			stopped[best] = true
			out = append(out, Eviction{TaskID: tasks[best].TaskID, Attempt: tasks[best].Attempt, Device: d.Device,
				UsedMiB: bestUsed, ShareMiB: bestShare, FreeMiB: free})
		}
	}
	return out
}

// NVIDIAMemory reads the figures Police needs from nvidia-smi: per-process
// memory (--query-compute-apps=pid,gpu_uuid,used_memory) and per-GPU
// memory (--query-gpu=uuid,memory.total,memory.used), both CSV without
// header or units. Values nvidia-smi cannot give ("[N/A]") are skipped.
func NVIDIAMemory(ctx context.Context, cli Commander) ([]DeviceMemory, []ProcMemory, error) {
	gpus, err := cli.Run(ctx, "nvidia-smi", "--query-gpu=uuid,memory.total,memory.used", "--format=csv,noheader,nounits")
	if err != nil {
		return nil, nil, fmt.Errorf("gpu memory: %w", err)
	}
	apps, err := cli.Run(ctx, "nvidia-smi", "--query-compute-apps=pid,gpu_uuid,used_memory", "--format=csv,noheader,nounits")
	if err != nil {
		return nil, nil, fmt.Errorf("per-process gpu memory: %w", err)
	}
	var devs []DeviceMemory
	for _, f := range csvRows(gpus, 3) {
		total, err1 := strconv.ParseInt(f[1], 10, 64)
		usedMiB, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 == nil && err2 == nil {
			devs = append(devs, DeviceMemory{Device: f[0], TotalMiB: total, UsedMiB: usedMiB})
		}
	}
	var procs []ProcMemory
	for _, f := range csvRows(apps, 3) {
		pid, err1 := strconv.Atoi(f[0])
		mem, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 == nil && err2 == nil {
			procs = append(procs, ProcMemory{PID: pid, Device: f[1], MemoryMiB: mem})
		}
	}
	return devs, procs, nil
}

func csvRows(out []byte, n int) [][]string {
	var rows [][]string
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Split(line, ",")
		if len(f) != n {
			continue
		}
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		rows = append(rows, f)
	}
	return rows
}

// Evict stops the task as failed with reason (the server requeues a failed
// task when its retries allow; a cancel would not).
func (h *Handle) Evict(reason string) { h.stop(protocol.PhaseFailed, reason) }
