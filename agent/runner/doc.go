// Package runner runs one assigned task on the node.
//
// A task runs as a process in its own process group (Unix) or, when it names
// an image and docker/podman is on PATH, as `docker run --rm` with the
// vendor's device flags. Before it starts, the runner
//
//   - computes the device-selection variables of each vendor from the assigned
//     devices (one table: vendors.go);
//   - applies the isolation of the task's QoS tier: Gold partitions are
//     created through the vendor CLI (nvidia-smi mig, npu-smi create-vnpu,
//     hy-smi virtual) and removed when the task ends; Silver limits are
//     environment variables read by the vendor runtime or HAMi-core (limits.go);
//     Bronze sets visibility only.
//
// stdout and stderr go through pipes into size-capped rotating files whose
// names carry their starting byte offset, so a reader can stream them by
// offset (logs.go). A timeout or a cancel sends SIGTERM to the whole process
// group and SIGKILL after a grace period; when the main process exits, any
// process it left behind in the group is killed too.
//
// Every vendor CLI invocation goes through the Commander interface so tests
// (and the simulated CLIs of fakesmi) can record exactly what was issued.
package runner
