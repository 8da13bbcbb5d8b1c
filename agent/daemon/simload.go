package daemon

// DeviceLoad is the load the running tasks put on one device: the sum of
// their compute shares (capped at 100 %) and of their memory, and the memory
// of the tasks inside each hardware partition (by the partition's id: a MIG
// GPU instance id, a vNPU or vDCU id), which the simulated CLI reports per
// instance as nvidia-smi does.
type DeviceLoad struct {
	UtilizationPercent float64
	MemoryUsedMiB      int64
	PartitionMemoryMiB map[string]int64
}

// simulateLoad hands the per-device load of the running tasks (keyed by
// device index) to Config.SimulatedLoad, when set.
func (a *Agent) simulateLoad() {
	if a.cfg.SimulatedLoad == nil {
		return
	}
	per := map[int]DeviceLoad{}
	a.mu.Lock()
	for _, t := range a.tasks {
		for _, d := range t.spec.Devices {
			l := per[d.Index]
			pct := d.ComputePercent
			if pct == 0 {
				pct = 100
			}
			l.UtilizationPercent = min(100, l.UtilizationPercent+float64(pct))
			l.MemoryUsedMiB += int64(d.MemoryMiB)
			if d.PartitionID != "" {
				if l.PartitionMemoryMiB == nil {
					l.PartitionMemoryMiB = map[string]int64{}
				}
				l.PartitionMemoryMiB[d.PartitionID] += int64(d.MemoryMiB)
			}
			per[d.Index] = l
		}
	}
	a.mu.Unlock()
	if err := a.cfg.SimulatedLoad(per); err != nil {
		a.cfg.Logger.Warn("update simulated device load", "err", err)
	}
}
