package scheduling

import (
	"encoding/json"
	"net/http"

	"github.com/heteroflow/heteroflow/controlplane/httpapi"
)

// The response shapes below are what the handlers in api*.go write; they are
// named here so the OpenAPI document (and clients generated from it) have a
// schema for every scheduling route.

type pluginList struct {
	Items   []pluginState `json:"items"`
	Profile string        `json:"profile" doc:"Name of the scheduling profile in force"`
}

type pluginOrder struct {
	Order []string `json:"order" doc:"Plugin names in evaluation order"`
}

type quotaList struct {
	Items []quotaJSON `json:"items"`
	Total int         `json:"total"`
}

type whyPending struct {
	TaskID       int64           `json:"task_id"`
	State        string          `json:"state"`
	Reason       string          `json:"reason"`
	Pending      bool            `json:"pending"`
	LastAttempt  json.RawMessage `json:"last_attempt" doc:"The last scheduling cycle: per node and plugin, why it was refused; null before the first cycle"`
	Preemptions  int             `json:"preemptions,omitempty"`
	FailedCycles int             `json:"failed_cycles,omitempty"`
}

type clusterSummary struct {
	GPUs struct {
		Total  int `json:"total"`
		Online int `json:"online"`
		Busy   int `json:"busy"`
	} `json:"gpus"`
	MemoryMiB struct {
		Total int64 `json:"total"`
		Free  int64 `json:"free"`
	} `json:"memory_mib"`
	SliceUtilization *float64 `json:"slice_utilization" doc:"Allocated compute share of online devices; null without devices"`
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
		Leader   bool   `json:"leader"`
		Holder   string `json:"holder"`
		LastTick string `json:"last_tick"`
	} `json:"scheduler"`
}

type sliceList struct {
	Items              []deviceJSON   `json:"items"`
	Total              int            `json:"total"`
	FragmentationScore float64        `json:"fragmentation_score"`
	Devices            map[string]int `json:"devices" doc:"Device count per state: free, fragmented, allocated"`
}

type defragAnswer struct {
	Plan           plan `json:"plan"`
	ExecuteAllowed bool `json:"execute_allowed"`
}

// defragExecuted answers an executed plan; a dry run answers defragAnswer.
type defragExecuted struct {
	Plan     plan    `json:"plan"`
	Requeued []int64 `json:"requeued" doc:"Tasks requeued to move"`
}

type defragRequest struct {
	Execute bool `json:"execute" doc:"true requeues the plan's moves (needs --allow-defrag); false is a dry run"`
}

// document puts the scheduling routes in the OpenAPI document.
func document(api *httpapi.API) {
	p := httpapi.Prefix
	plugins, quotas := []string{"scheduler plugins"}, []string{"quotas"}
	sched := []string{"scheduler"}
	api.Document(http.MethodGet, p+"/plugins", httpapi.Doc{ID: "list-plugins", Summary: "Scheduler plugins with their enablement, weights and order", Tags: plugins, Response: pluginList{}})
	api.Document(http.MethodPatch, p+"/plugins/{name}", httpapi.Doc{ID: "patch-plugin", Summary: "Enable, disable or reweight a plugin", Tags: plugins,
		Request: pluginPatch{}, Response: pluginList{}, Errors: []int{404}})
	api.Document(http.MethodPut, p+"/plugins/order", httpapi.Doc{ID: "put-plugin-order", Summary: "Set the plugins' evaluation order", Tags: plugins,
		Request: pluginOrder{}, Response: pluginList{}})
	api.Document(http.MethodGet, p+"/quotas", httpapi.Doc{ID: "list-quotas", Summary: "Quotas with their current use", Tags: quotas, Response: quotaList{}})
	api.Document(http.MethodPost, p+"/quotas", httpapi.Doc{ID: "create-quota", Summary: "Create a quota", Tags: quotas,
		Request: quotaJSON{}, Response: quotaJSON{}, Status: http.StatusCreated, Errors: []int{409}})
	api.Document(http.MethodGet, p+"/quotas/{id}", httpapi.Doc{ID: "get-quota", Summary: "A quota with its use", Tags: quotas, Response: quotaJSON{}, Errors: []int{404}})
	api.Document(http.MethodPut, p+"/quotas/{id}", httpapi.Doc{ID: "put-quota", Summary: "Replace a quota", Tags: quotas,
		Request: quotaJSON{}, Response: quotaJSON{}, Errors: []int{404, 409}})
	api.Document(http.MethodDelete, p+"/quotas/{id}", httpapi.Doc{ID: "delete-quota", Summary: "Delete a quota", Tags: quotas, Status: http.StatusNoContent, Errors: []int{404}})
	api.Document(http.MethodGet, p+"/tasks/{id}/why", httpapi.Doc{ID: "why-task", Summary: "Why a task is pending: per node and plugin", Tags: []string{"tasks"},
		Response: whyPending{}, Errors: []int{404}})
	api.Document(http.MethodGet, p+"/scheduler/summary", httpapi.Doc{ID: "scheduler-summary", Summary: "Cluster summary: devices, memory, tasks, fragmentation, leader", Tags: sched, Response: clusterSummary{}})
	api.Document(http.MethodGet, p+"/slices", httpapi.Doc{ID: "list-slices", Summary: "Every device with its slices and allocation state", Tags: sched,
		Response: sliceList{}})
	api.Document(http.MethodGet, p+"/scheduler/defrag", httpapi.Doc{ID: "plan-defrag", Summary: "Defragmentation plan (dry run)", Tags: sched, Response: defragAnswer{}})
	api.Document(http.MethodPost, p+"/scheduler/defrag", httpapi.Doc{ID: "execute-defrag", Summary: "Execute the defragmentation plan", Tags: sched,
		Request: defragRequest{}, Response: defragExecuted{}, Errors: []int{409}})
}
