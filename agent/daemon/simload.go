package daemon

// DeviceLoad is the load the running tasks put on one device: the sum of
// their compute shares (capped at 100 %) and of their memory.
type DeviceLoad struct {
	UtilizationPercent float64
	MemoryUsedMiB      int64
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
			per[d.Index] = l
		}
	}
	a.mu.Unlock()
	if err := a.cfg.SimulatedLoad(per); err != nil {
		a.cfg.Logger.Warn("update simulated device load", "err", err)
	}
}
