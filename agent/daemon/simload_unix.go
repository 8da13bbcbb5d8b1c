//go:build unix

package daemon

import (
	"github.com/heteroflow/heteroflow/receivers/fakesmi"
)

// simulateLoad makes a simulated node's utilisation and memory follow the
// running tasks (make run, end-to-end tests): each device gets the sum of
// its tasks' compute share and memory. Only when FakeSMIState is set; real
// nodes report what their vendor CLI measures.
func (a *Agent) simulateLoad() {
	if a.cfg.FakeSMIState == "" {
		return
	}
	type load struct {
		util float64
		mem  int64
	}
	per := map[int]load{}
	a.mu.Lock()
	for _, t := range a.tasks {
		for _, d := range t.spec.Devices {
			l := per[d.Index]
			pct := d.ComputePercent
			if pct == 0 {
				pct = 100
			}
			l.util = min(100, l.util+float64(pct))
			l.mem += int64(d.MemoryMiB)
			per[d.Index] = l
		}
	}
	a.mu.Unlock()
	err := fakesmi.UpdateState(a.cfg.FakeSMIState, func(s *fakesmi.State) error {
		for i, d := range s.Devices {
			l := per[i]
			d.UtilizationPercent, d.MemoryUsedMiB = l.util, l.mem
			s.Devices[i] = d
		}
		for i, l := range per {
			if _, ok := s.Devices[i]; !ok {
				s.Devices[i] = fakesmi.DeviceState{UtilizationPercent: l.util, MemoryUsedMiB: l.mem}
			}
		}
		return nil
	})
	if err != nil {
		a.cfg.Logger.Warn("update simulated device load", "err", err)
	}
}
