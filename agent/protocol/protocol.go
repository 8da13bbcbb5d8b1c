package protocol

import (
	"encoding/json"
	"time"

	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// Isolation modes a DeviceSlice can ask the agent to apply. Gold modes create
// a hardware partition through the vendor CLI and remove it when the task
// ends; Silver modes are environment limits read by the vendor runtime or an
// interposer library; Bronze only sets visibility.
const (
	IsolationWhole    = "whole"     // Gold without partitioning: the whole device
	IsolationMIG      = "mig"       // Gold, NVIDIA: nvidia-smi mig -cgi/-cci
	IsolationVNPU     = "vnpu"      // Gold, Ascend: npu-smi set -t create-vnpu
	IsolationVDCU     = "vdcu"      // Gold, Hygon: hy-smi virtual -create-vdevices
	IsolationVF       = "vf"        // Gold, Cambricon SR-IOV VF that already exists (PartitionID)
	IsolationHAMiCore = "hami-core" // Silver, NVIDIA: CUDA_DEVICE_MEMORY_LIMIT / CUDA_DEVICE_SM_LIMIT
	IsolationMPS      = "mps"       // Silver, NVIDIA: CUDA_MPS_* limits
	IsolationEnv      = "env-limits"
	IsolationShare    = "share" // Bronze: visibility only
	// IsolationBestEffort is Silver on a node that enforces no Silver
	// limits, which the task allowed: visibility only, nothing enforced.
	IsolationBestEffort = "best-effort"
)

// DeviceSlice is one device (or slice of one) assigned to a task: a ledger
// row as the agent needs it.
type DeviceSlice struct {
	Vendor         string `json:"vendor"`
	Index          int    `json:"index"` // vendor logical index (CUDA index, Ascend Chip Logic ID, …)
	UUID           string `json:"uuid,omitempty"`
	Card           *int   `json:"card,omitempty"` // physical board (NPU ID) for multi-chip cards
	Chip           *int   `json:"chip,omitempty"`
	MemoryMiB      int    `json:"memory_mib,omitempty"`
	ComputePercent int    `json:"compute_percent,omitempty"`
	ComputeUnits   int    `json:"compute_units,omitempty"` // vDCU: compute units to carve
	Isolation      string `json:"isolation,omitempty"`
	// Profile is the hardware partition shape for Gold (MIG "1g.10gb",
	// vNPU "vir03_1c_8g"); PartitionID/PartitionUUID name an existing one.
	Profile       string `json:"profile,omitempty"`
	PartitionID   string `json:"partition_id,omitempty"`
	PartitionUUID string `json:"partition_uuid,omitempty"`
}

// TaskSpec is the part of a task the agent executes.
type TaskSpec struct {
	TaskID  int64             `json:"task_id"`
	Attempt int               `json:"attempt"`
	Name    string            `json:"name"`
	Command []string          `json:"command,omitempty"`
	Image   string            `json:"image,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	// SecretEnv is the task's secret environment: merged into the task's
	// clean environment by the agent (after Env), never logged, never echoed back.
	SecretEnv      map[string]string `json:"secret_env,omitempty"`
	QoS            string            `json:"qos,omitempty"`
	TimeoutSeconds int               `json:"timeout_seconds,omitempty"`
	Devices        []DeviceSlice     `json:"devices,omitempty"`
	// TraceParent continues the server's trace of this task (W3C
	// traceparent of its bind span); empty when tracing is off.
	TraceParent string `json:"traceparent,omitempty"`
	// Tenant and Owner (the submitting user's name) choose the local
	// account the task runs as when the node maps tenants or users to
	// accounts (agent --run-as-map).
	Tenant string `json:"tenant,omitempty"`
	Owner  string `json:"owner,omitempty"`
}

// Assignment kinds delivered on the long-poll channel.
const (
	KindRun    = "run"    // start Task
	KindCancel = "cancel" // stop TaskID/Attempt
	KindManage = "manage" // management command (config push, log collection, status query)
)

// Assignment is one item the server hands to an agent.
type Assignment struct {
	ID      int64       `json:"id"` // server-side row id; the agent acknowledges it via status
	Kind    string      `json:"kind"`
	Task    *TaskSpec   `json:"task,omitempty"`
	TaskID  int64       `json:"task_id,omitempty"`
	Attempt int         `json:"attempt,omitempty"`
	Manage  *Management `json:"manage,omitempty"`
}

// Management commands (remote management, brief §4).
const (
	ManageConfig = "config"       // apply Config
	ManageLogs   = "agent-logs"   // upload the agent's own log tail
	ManageStatus = "agent-status" // upload a status report
)

// Management is a remote-management command and, once the agent answered,
// its result.
type Management struct {
	ID      int64           `json:"id"`
	Command string          `json:"command"`
	Config  json.RawMessage `json:"config,omitempty"`
}

// ManagementResult is the agent's answer to a Management command.
type ManagementResult struct {
	ID     int64           `json:"id"`
	OK     bool            `json:"ok"`
	Error  string          `json:"error,omitempty"`
	Output json.RawMessage `json:"output,omitempty"`
}

// EnrollRequest is posted once with a bootstrap token.
type EnrollRequest struct {
	Token     string               `json:"token"`
	Hostname  string               `json:"hostname"`
	OS        string               `json:"os,omitempty"`
	Arch      string               `json:"arch,omitempty"`
	Version   string               `json:"version,omitempty"`
	Labels    map[string]string    `json:"labels,omitempty"`
	Inventory []inventory.Snapshot `json:"inventory"`
	// CSR is a PEM certificate request for the node's locally generated
	// key, sent when the server enables mTLS; the key never leaves the node.
	CSR string `json:"csr,omitempty"`
}

// CertRenewRequest asks for a new client certificate for the calling
// node (POST /api/v1/agents/certificate), authenticated by its current
// certificate or key; CSR is for a fresh key made on the node.
type CertRenewRequest struct {
	CSR string `json:"csr"`
}

// CertRenewResponse is the new certificate; the old one stays valid until
// it expires.
type CertRenewResponse struct {
	Certificate string    `json:"certificate"`
	CABundle    string    `json:"ca_bundle"`
	NotAfter    time.Time `json:"not_after"`
}

// EnrollResponse carries the node's permanent credential (shown once).
type EnrollResponse struct {
	NodeID string `json:"node_id"`
	APIKey string `json:"api_key"`
	// Certificate is the node's client certificate (PEM, CN = node id) and
	// CABundle the CA that signed it, when the request carried a CSR.
	Certificate string `json:"certificate,omitempty"`
	CABundle    string `json:"ca_bundle,omitempty"`
}

// Heartbeat reports health, free resources and what the agent runs.
type Heartbeat struct {
	Health         string               `json:"health"` // "ok" | "degraded"
	CPUCount       int                  `json:"cpu_count,omitempty"`
	MemoryTotalMiB int64                `json:"memory_total_mib,omitempty"`
	MemoryFreeMiB  int64                `json:"memory_free_mib,omitempty"`
	Inventory      []inventory.Snapshot `json:"inventory,omitempty"` // only when it changed
	Running        []RunningTask        `json:"running"`
	Version        string               `json:"version,omitempty"`
}

// RunningTask is one task the agent is running right now.
type RunningTask struct {
	TaskID    int64     `json:"task_id"`
	Attempt   int       `json:"attempt"`
	PID       int       `json:"pid"`
	StartedAt time.Time `json:"started_at"`
	// TraceParent is the agent's start span of the task (W3C traceparent),
	// so the server's span of the first heartbeat reporting it joins the
	// task's trace; empty when tracing is off.
	TraceParent string `json:"traceparent,omitempty"`
}

// HeartbeatResponse tells the agent what the server expects it to run, so
// the agent can kill work the server no longer wants (ledger is the truth).
type HeartbeatResponse struct {
	NodeID   string        `json:"node_id"`
	State    string        `json:"state"`
	Expected []RunningTask `json:"expected"`
}

// Task phases reported through the outbox.
const (
	PhaseStarted   = "started"
	PhaseSucceeded = "succeeded"
	PhaseFailed    = "failed"
	PhaseCancelled = "cancelled"
	PhaseTimedOut  = "timed_out"
	PhaseManaged   = "managed" // a ManagementResult
)

// StatusUpdate is one outbox entry. Seq is per node and strictly increasing;
// the server ignores a Seq it has already applied (idempotent delivery).
type StatusUpdate struct {
	Seq      uint64    `json:"seq"`
	TaskID   int64     `json:"task_id,omitempty"`
	Attempt  int       `json:"attempt,omitempty"`
	Phase    string    `json:"phase"`
	ExitCode *int      `json:"exit_code,omitempty"`
	Reason   string    `json:"reason,omitempty"`
	At       time.Time `json:"at"`
	// AssignmentID closes the assignment this update answers (a management
	// command, or a cancel for a task the agent no longer runs).
	AssignmentID int64             `json:"assignment_id,omitempty"`
	Result       *ManagementResult `json:"result,omitempty"`
	// Outputs are the small result values the task wrote to the file named
	// by OutputsEnv (KEY=VALUE lines), sent with its end.
	Outputs map[string]string `json:"outputs,omitempty"`
}

// OutputsEnv names the file a task may write result values to, one
// KEY=VALUE per line; workflows hand them to later steps.
const OutputsEnv = "HETEROFLOW_OUTPUTS"

// Limits on a task's outputs: more keys, a longer value or a larger file
// are refused (the agent reports none, the server answers 400).
const (
	MaxOutputs      = 64
	MaxOutputValue  = 4 << 10
	MaxOutputsBytes = 64 << 10
)

// StatusBatch is the body of POST /api/v1/agents/status.
type StatusBatch struct {
	Updates []StatusUpdate `json:"updates"`
}

// StatusAck is the answer: every Seq ≤ Acked is applied (or was a duplicate).
type StatusAck struct {
	Acked uint64 `json:"acked"`
}

// LogChunk is one piece of a task's stdout or stderr; Offset is the byte
// offset of Data in the stream, so retries are idempotent.
type LogChunk struct {
	TaskID  int64  `json:"task_id"`
	Attempt int    `json:"attempt"`
	Stream  string `json:"stream"` // "stdout" | "stderr"
	Offset  int64  `json:"offset"`
	Data    string `json:"data"`
}

// LogBatch is the body of POST /api/v1/agents/logs.
type LogBatch struct {
	Chunks []LogChunk `json:"chunks"`
}

// AssignmentList is the answer of GET /api/v1/agents/assignments.
type AssignmentList struct {
	Items []Assignment `json:"items"`
}
