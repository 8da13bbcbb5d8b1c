package apitypes

import (
	"encoding/json"
	"time"
)

// The REST answers a hub reads of its members (a member is another
// HeteroFlow server; where the server owns no wire type, only the fields the
// hub uses), and the hub's own wire types.

// ClusterSummary is GET /api/v1/scheduler/summary: the dashboard's overview,
// also what a hub reads of each member. Ratios are null (unknown)
// when their denominator is zero, never 0.
type ClusterSummary struct {
	GPUs struct {
		Total  int `json:"total"`
		Online int `json:"online"`
		Busy   int `json:"busy"`
	} `json:"gpus"`
	MemoryMiB struct {
		Total int64 `json:"total"`
		Free  int64 `json:"free"`
	} `json:"memory_mib"`
	SliceUtilization *float64 `json:"slice_utilization" doc:"Allocated compute share of online devices"`
	Nodes            struct {
		Total      int            `json:"total"`
		Online     int            `json:"online"`
		OnlineRate *float64       `json:"online_rate"`
		Health     map[string]int `json:"health"`
	} `json:"nodes"`
	Tasks              map[string]int `json:"tasks" doc:"Task count per state"`
	TaskCompletionRate *float64       `json:"task_completion_rate"`
	Fragmentation      struct {
		Score      float64 `json:"score"`
		Free       int     `json:"free"`
		Fragmented int     `json:"fragmented"`
		Allocated  int     `json:"allocated"`
	} `json:"fragmentation"`
	Scheduler struct {
		Leader   bool      `json:"leader"`
		Holder   string    `json:"holder"`
		LastTick time.Time `json:"last_tick"`
	} `json:"scheduler"`
}

// DeviceSlicesJSON is one device of GET /api/v1/slices as a hub reads it.
type DeviceSlicesJSON struct {
	Node         string `json:"node"`
	Online       bool   `json:"online"`
	Vendor       string `json:"vendor"`
	Model        string `json:"model"`
	MemoryMiB    int64  `json:"memory_mib"`
	AllocatedMiB int64  `json:"allocated_memory_mib"`
	FreePercent  int    `json:"free_compute_percent"`
	State        string `json:"state"`
}

// UsageReportJSON is the total of GET /api/v1/billing/report as a hub reads it.
type UsageReportJSON struct {
	Period   string `json:"period"`
	Currency string `json:"currency"`
	Total    struct {
		Hours struct {
			DeviceHours float64 `json:"device_hours"`
		} `json:"hours"`
		Cost float64 `json:"cost"`
	} `json:"total"`
}

// ClusterRegisterJSON is what an admin gives to register a member.
type ClusterRegisterJSON struct {
	Name   string `json:"name" minLength:"1" maxLength:"63" doc:"Lowercase letters, digits and '-', starting with a letter"`
	URL    string `json:"url" minLength:"1" maxLength:"2048" doc:"The member's API address, e.g. https://east.example.com:3333"`
	APIKey string `json:"api_key" minLength:"1" maxLength:"512" writeOnly:"true" doc:"An admin or operator API key of the member; stored sealed, never returned"`
	CAPEM  string `json:"ca_pem,omitempty" maxLength:"65536" doc:"PEM of the CA that signed the member's certificate (pinned instead of the system roots)"`
	// Fingerprint pins the member's certificate itself.
	Fingerprint string `json:"fingerprint,omitempty" maxLength:"128" doc:"SHA-256 of the member's certificate (hex, colons allowed), pinned"`
}

// DeviceGroupJSON is a member's devices of one vendor and model.
type DeviceGroupJSON struct {
	Vendor  string `json:"vendor"`
	Model   string `json:"model"`
	Total   int    `json:"total"`
	Online  int    `json:"online"`
	Free    int    `json:"free" doc:"Online devices with nothing allocated"`
	FreeMiB int64  `json:"free_memory_mib"`
	// FreeComputePercent is Σ free compute share over online devices.
	FreeComputePercent int `json:"free_compute_percent"`
}

// ClusterSummaryJSON is what the hub's leader last read from a member.
type ClusterSummaryJSON struct {
	Health        string            `json:"health" enum:"ok,degraded"`
	NodesTotal    int               `json:"nodes_total"`
	NodesOnline   int               `json:"nodes_online"`
	DevicesTotal  int               `json:"devices_total"`
	DevicesOnline int               `json:"devices_online"`
	DevicesFree   int               `json:"devices_free"`
	MemoryMiB     int64             `json:"memory_mib"`
	FreeMemoryMiB int64             `json:"free_memory_mib"`
	Utilization   *float64          `json:"utilization" doc:"Allocated compute share of online devices; null when none"`
	Fragmentation float64           `json:"fragmentation"`
	QueueDepth    int               `json:"queue_depth" doc:"Tasks submitted or queued"`
	Running       int               `json:"running"`
	AlertsFiring  int               `json:"alerts_firing"`
	UsageHours    float64           `json:"usage_device_hours" doc:"Device-hours this month"`
	UsageCost     float64           `json:"usage_cost"`
	Currency      string            `json:"currency,omitempty"`
	Devices       []DeviceGroupJSON `json:"devices" doc:"By vendor and model"`
}

// ClusterJSON is a registered member (never its API key).
type ClusterJSON struct {
	ID          int64               `json:"id"`
	Name        string              `json:"name"`
	URL         string              `json:"url"`
	TLSPinned   string              `json:"tls_pinned" enum:"none,ca,fingerprint" doc:"How the member's certificate is pinned"`
	Fingerprint string              `json:"fingerprint,omitempty"`
	Version     string              `json:"version"`
	Status      string              `json:"status" enum:"unknown,reachable,unreachable"`
	LastError   string              `json:"last_error,omitempty"`
	PolledAt    *time.Time          `json:"polled_at"`
	Summary     *ClusterSummaryJSON `json:"summary" doc:"The last summary read; kept while the member is unreachable"`
	CreatedBy   string              `json:"created_by"`
	CreatedAt   time.Time           `json:"created_at"`
}

// HubTaskSubmitJSON is a task for the hub to place on a member.
type HubTaskSubmitJSON struct {
	// Cluster is "auto" (the best member), or one member's name.
	Cluster string `json:"cluster,omitempty" maxLength:"63" doc:"auto (default) or a member's name"`
	// Clusters limits auto placement to these members.
	Clusters []string     `json:"clusters,omitempty" maxItems:"64" doc:"Place on the best of these members"`
	Task     TaskSpecJSON `json:"task"`
}

// ClusterScoreJSON is one member's cluster-level score of a placement.
type ClusterScoreJSON struct {
	Cluster    string  `json:"cluster"`
	Score      float64 `json:"score" doc:"0-100; the highest wins"`
	Fits       int     `json:"fits" doc:"Online devices that can take one of the task's devices now"`
	Matching   int     `json:"matching" doc:"Devices of the requested vendor/model"`
	QueueDepth int     `json:"queue_depth"`
	Reason     string  `json:"reason,omitempty" doc:"Why the member was not eligible"`
}

// HubTaskJSON is a task the hub forwarded, with its member's live view.
type HubTaskJSON struct {
	ID           int64              `json:"id"`
	Cluster      string             `json:"cluster"`
	MemberTaskID int64              `json:"member_task_id"`
	Name         string             `json:"name"`
	Owner        string             `json:"owner"`
	State        string             `json:"state" doc:"The member's task state; unknown while the member cannot be reached"`
	Reason       string             `json:"reason"`
	Scores       []ClusterScoreJSON `json:"scores,omitempty" doc:"The placement's scores per member"`
	Task         *TaskJSON          `json:"task,omitempty" doc:"The member's task, when it answered"`
	CreatedAt    time.Time          `json:"created_at"`
	UpdatedAt    time.Time          `json:"updated_at"`
	FinishedAt   *time.Time         `json:"finished_at"`
}

// RawJSON is a member's answer passed through as it came (logs, why).
type RawJSON = json.RawMessage
