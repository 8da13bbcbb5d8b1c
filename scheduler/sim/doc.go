// Package sim replays a task trace against a cluster through the same
// framework and plugins the server uses, with the exact protocol of the FGD
// paper's simulator (shared/trace/REFERENCE.md): tasks in name order,
// shuffled by the seed; "tune" tasks sampled with replacement up to a
// multiple of the cluster's device capacity; each task placed once, in
// order, no departures, retries or preemption; the allocation ratio and the
// fragmentation recorded after every task and averaged per integer percent
// of arrived demand.
//
// Inputs: the openb CSV files (node list, pod lists) or our own JSON (an
// array of model.Node, an array of model.Request).
package sim
