//go:build windows

package daemon

// simulateLoad: the simulated CLIs (fakesmi) are Unix shell wrappers.
func (a *Agent) simulateLoad() {}
