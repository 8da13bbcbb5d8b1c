package plugins

import "github.com/heteroflow/heteroflow/scheduler/framework"

// LiveRegistry is Registry plus the plugins that need the live cluster's
// inputs (PromQL, tenant usage, placed tasks' priorities, gang groups):
// LoadAware, Quota, Gang and Preempt. Without those inputs connected they
// stay neutral, so the simulator may list them too.
func LiveRegistry() framework.Registry {
	r := Registry()
	live := framework.Registry{
		NameLoadAware: NewLoadAware,
		NameQuota:     NewQuota,
		NameGang:      NewGang,
		NamePreempt:   NewPreempt,
	}
	if err := r.Merge(live); err != nil {
		panic(err) // a duplicate name is a programming error
	}
	return r
}
