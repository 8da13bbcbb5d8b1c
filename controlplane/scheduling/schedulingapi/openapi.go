package schedulingapi

import (
	"net/http"

	"github.com/heteroflow/heteroflow/controlplane/httpapi"
	"github.com/heteroflow/heteroflow/controlplane/scheduling"
)

// document puts the scheduling routes in the OpenAPI document.
func document(api *httpapi.API) {
	p := httpapi.Prefix
	plugins, quotas := []string{"scheduler plugins"}, []string{"quotas"}
	sched := []string{"scheduler"}
	api.Document(http.MethodGet, p+"/plugins", httpapi.Doc{ID: "list-plugins", Summary: "Scheduler plugins with their enablement, weights and order", Tags: plugins, Response: scheduling.PluginList{}})
	api.Document(http.MethodPatch, p+"/plugins/{name}", httpapi.Doc{ID: "patch-plugin", Summary: "Enable, disable or reweight a plugin", Tags: plugins,
		Request: scheduling.PluginPatch{}, Response: scheduling.PluginList{}, Errors: []int{404}})
	api.Document(http.MethodPut, p+"/plugins/order", httpapi.Doc{ID: "put-plugin-order", Summary: "Set the plugins' evaluation order", Tags: plugins,
		Request: pluginOrder{}, Response: scheduling.PluginList{}})
	api.Document(http.MethodGet, p+"/quotas", httpapi.Doc{ID: "list-quotas", Summary: "Quotas with their current use", Tags: quotas, Response: scheduling.QuotaList{}})
	api.Document(http.MethodPost, p+"/quotas", httpapi.Doc{ID: "create-quota", Summary: "Create a quota", Tags: quotas,
		Request: scheduling.QuotaView{}, Response: scheduling.QuotaView{}, Status: http.StatusCreated, Errors: []int{409}})
	api.Document(http.MethodGet, p+"/quotas/{id}", httpapi.Doc{ID: "get-quota", Summary: "A quota with its use", Tags: quotas, Response: scheduling.QuotaView{}, Errors: []int{404}})
	api.Document(http.MethodPut, p+"/quotas/{id}", httpapi.Doc{ID: "put-quota", Summary: "Replace a quota", Tags: quotas,
		Request: scheduling.QuotaView{}, Response: scheduling.QuotaView{}, Errors: []int{404, 409}})
	api.Document(http.MethodDelete, p+"/quotas/{id}", httpapi.Doc{ID: "delete-quota", Summary: "Delete a quota", Tags: quotas, Status: http.StatusNoContent, Errors: []int{404}})
	api.Document(http.MethodGet, p+"/tasks/{id}/why", httpapi.Doc{ID: "why-task", Summary: "Why a task is pending: per node and plugin", Tags: []string{"tasks"},
		Response: scheduling.WhyPending{}, Errors: []int{404}})
	api.Document(http.MethodGet, p+"/scheduler/summary", httpapi.Doc{ID: "scheduler-summary", Summary: "Cluster summary: devices, memory, tasks, fragmentation, leader", Tags: sched, Response: scheduling.ClusterSummary{}})
	api.Document(http.MethodGet, p+"/slices", httpapi.Doc{ID: "list-slices", Summary: "Every device with its slices and allocation state", Tags: sched, Response: scheduling.SliceList{}})
	api.Document(http.MethodGet, p+"/scheduler/defrag", httpapi.Doc{ID: "plan-defrag", Summary: "Defragmentation plan (dry run)", Tags: sched, Response: scheduling.DefragAnswer{}})
	api.Document(http.MethodPost, p+"/scheduler/defrag", httpapi.Doc{ID: "execute-defrag", Summary: "Execute the defragmentation plan", Tags: sched,
		Request: defragRequest{}, Response: scheduling.DefragExecuted{}, Errors: []int{409}})
}
