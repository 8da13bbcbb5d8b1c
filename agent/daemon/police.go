package daemon

import (
	"context"
	"time"

	"github.com/heteroflow/heteroflow/agent/procgroup"
	"github.com/heteroflow/heteroflow/agent/runner"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// policeInterval is how often Bronze memory is policed while Bronze tasks
// run on NVIDIA GPUs.
const policeInterval = 10 * time.Second

// policeLoop runs Bronze memory policing (runner.Police) until ctx ends.
func (a *Agent) policeLoop(ctx context.Context) {
	tick := time.NewTicker(policeInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			a.police(ctx)
		}
	}
}

// police reads per-process GPU memory from nvidia-smi and stops, as failed
// with the reason on the task, each Bronze task the policy picks. Tasks in
// containers are not policed: their processes are not in the task's
// process group on the host.
func (a *Agent) police(ctx context.Context) {
	var tasks []runner.PolicedTask
	handles := map[[2]int64]*runner.Handle{}
	a.mu.Lock()
	for _, t := range a.tasks {
		if t.h.Container() || (t.spec.QoS != "bronze" && t.spec.QoS != "") {
			continue
		}
		nvidia := false
		for _, d := range t.spec.Devices {
			nvidia = nvidia || d.Vendor == inventory.VendorNVIDIA
		}
		if !nvidia {
			continue
		}
		tasks = append(tasks, runner.PolicedTask{TaskID: t.spec.TaskID, Attempt: t.spec.Attempt, QoS: "bronze",
			PIDs: procgroup.Members(t.h.PID()), Devices: t.spec.Devices})
		handles[[2]int64{t.spec.TaskID, int64(t.spec.Attempt)}] = t.h
	}
	a.mu.Unlock()
	if len(tasks) == 0 {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	devs, procs, err := runner.NVIDIAMemory(cctx, a.cfg.CLI)
	if err != nil {
		a.cfg.Logger.Warn("bronze memory policing skipped", "err", err)
		return
	}
	for _, ev := range runner.Police(devs, procs, tasks) {
		a.cfg.Logger.Warn("stopping a bronze task over its memory share", "task", ev.TaskID, "attempt", ev.Attempt,
			"device", ev.Device, "used_mib", ev.UsedMiB, "share_mib", ev.ShareMiB, "free_mib", ev.FreeMiB)
		if h := handles[[2]int64{ev.TaskID, int64(ev.Attempt)}]; h != nil {
			h.Evict(ev.Reason())
		}
	}
}
