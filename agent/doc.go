// Package agent is HeteroFlow's node agent: it enrolls a machine with the
// control plane, reports the node's accelerators, heartbeats, long-polls for
// assignments and runs each assigned task with exactly its devices visible and
// its QoS tier's isolation applied.
//
// Subpackages, each with one concern:
//
//	agent/protocol     wire types shared with controlplane/agentapi (JSON)
//	agent/runner       run one task: env per vendor, isolation via the vendor CLI,
//	                   process group, capped rotating logs, timeout and cancel
//	agent/outbox       on-disk, ordered, idempotent queue of status updates
//	agent/state        local record of running tasks (orphan handling after a restart)
//	agent/credentials  the node's credential (DATA_DIR/credentials.json, 0600)
//
// See README.md for the flow between agent and server.
package agent
