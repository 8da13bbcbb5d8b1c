// Package scheduler is HeteroFlow's placement engine; the code lives in the
// subpackages: model (resource model, QoS isolation, ledger), framework
// (extension points, statuses, registry, profiles), plugins (built-ins) and
// sim (trace replay). See README.md for the flow of one cycle.
package scheduler
