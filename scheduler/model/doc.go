// Package model is the scheduler's unified resource model (ARCHITECTURE.md,
// "Resource model"): static nodes and devices of every vendor, the mutable
// per-device free capacity the scheduler works on, the task request, the
// QoS-to-isolation capability tables, and the allocation ledger.
//
// Units, chosen so that the hot path is integer arithmetic only:
//   - compute is in milli-devices: 1000 = one whole device (compute % × 10);
//     the openb trace's gpu_milli maps onto it one to one;
//   - memory is in MiB; CPU in milli-cores.
//
// The package imports receivers/inventory (the agents' normalized device
// model) but not controlplane: the server maps controlplane.TaskSpec onto
// Request, so the scheduler can be replayed and tested without a server.
package model
