package dashboards

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// Board is one generated dashboard.
type Board struct {
	File  string // file name under json/
	UID   string // stable Grafana uid (links and provisioning key on it)
	build func() *dashboard.DashboardBuilder
}

// JSON renders the dashboard as Grafana's import JSON (indented, with a
// trailing newline, so the committed file diffs cleanly).
func (b Board) JSON() ([]byte, error) {
	d, err := b.build().Build()
	if err != nil {
		return nil, fmt.Errorf("dashboard %s: %w", b.UID, err)
	}
	// Panel ids must be unique within a dashboard; the SDK leaves them unset.
	var id uint32
	for _, p := range d.Panels {
		id++
		switch {
		case p.Panel != nil:
			p.Panel.Id = cog.ToPtr(id)
		case p.RowPanel != nil:
			p.RowPanel.Id = id
		}
	}
	out, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("dashboard %s: %w", b.UID, err)
	}
	return append(out, '\n'), nil
}

// All lists every dashboard in the order of the provisioning folder.
func All() []Board {
	return []Board{
		{"overview.json", "heteroflow-overview", overviewBoard},
		{"node.json", "heteroflow-node", nodeBoard},
		{"device.json", "heteroflow-device", deviceBoard},
		{"slices.json", "heteroflow-slices", slicesBoard},
		{"tasks.json", "heteroflow-tasks", tasksBoard},
		{"scheduler.json", "heteroflow-scheduler", schedulerBoard},
		{"alerts.json", "heteroflow-alerts", alertsBoard},
		{"usage.json", "heteroflow-usage", usageBoard},
		{"agents.json", "heteroflow-agents", agentsBoard},
		{"server.json", "heteroflow-server", serverBoard},
	}
}

// Label selectors, one per family of series. Each regex matcher's "All" is
// ".*", which also matches a series without that label.
const (
	// gpuSel: hw_* device series from the vendor receivers.
	gpuSel = `cluster=~"$cluster", hw_vendor=~"$vendor", hw_model=~"$model", host_name=~"$node"`
	// hostSel: system_* host series from host_metrics.
	hostSel = `cluster=~"$cluster", host_name=~"$node"`
	// nodeSel: the server's per-node series (heteroflow_node_up).
	nodeSel = `cluster=~"$cluster", node=~"$node"`
	// allocSel: devices held by placed tasks.
	allocSel = `cluster=~"$cluster", vendor=~"$vendor", node=~"$node", tenant=~"$tenant"`
	// tenantSel: per-tenant scheduler series.
	tenantSel = `cluster=~"$cluster", tenant=~"$tenant"`
	// srvSel: the server's own registry, self-ingested.
	srvSel = `cluster=~"$cluster", job="heteroflow"`
	// agentSel: each agent's own metrics.
	agentSel = `cluster=~"$cluster", job="heteroflow-agent", node=~"$node"`
)

// deviceSeries selects every device's series whichever figures it reports:
// a GPU in MIG mode has no utilisation (nvidia-smi prints N/A, kept absent),
// a device whose CLI hides its size has no memory limit. Lists of devices,
// nodes and vendors read both, so neither kind drops out.
const deviceSeries = `__name__=~"hw_gpu_utilization_ratio|hw_gpu_memory_limit_bytes"`

// Variables every dashboard has. The vendor, model and node lists narrow
// each other, so picking "ascend" offers only Ascend models and nodes.
const (
	varCluster = `label_values({` + deviceSeries + `}, cluster)`
	varVendor  = `label_values({` + deviceSeries + `, cluster=~"$cluster"}, hw_vendor)`
	varModel   = `label_values({` + deviceSeries + `, cluster=~"$cluster", hw_vendor=~"$vendor"}, hw_model)`
	varNode    = `label_values({` + deviceSeries + `, cluster=~"$cluster", hw_vendor=~"$vendor", hw_model=~"$model"}, host_name)`
	varTenant  = `label_values(heteroflow_allocated_devices{cluster=~"$cluster"}, tenant)`
	varDevice  = `label_values({` + deviceSeries + `, ` + gpuSel + `}, hw_id)`
)

// newBoard starts a dashboard with the common variables, tags and links.
func newBoard(uid, title, desc string, extra ...cog.Builder[dashboard.VariableModel]) *dashboard.DashboardBuilder {
	b := dashboard.NewDashboardBuilder(title).Uid(uid).Description(desc).
		Tags([]string{"heteroflow"}).Editable().Tooltip(dashboard.DashboardCursorSyncCrosshair).
		Refresh("30s").Time("now-1h", "now").Timezone(common.TimeZoneBrowser).
		Link(dashboard.NewDashboardLinkBuilder("HeteroFlow").Type(dashboard.DashboardLinkTypeDashboards).
			Tags([]string{"heteroflow"}).AsDropdown(true).IncludeVars(true).KeepTime(true)).
		WithVariable(dashboard.NewDatasourceVariableBuilder("datasource").Label("Data source / 数据源").Type("prometheus")).
		WithVariable(queryVar("cluster", "Cluster / 集群", varCluster)).
		WithVariable(queryVar("vendor", "Vendor / 厂商", varVendor)).
		WithVariable(queryVar("model", "Model / 型号", varModel)).
		WithVariable(queryVar("node", "Node / 节点", varNode)).
		WithVariable(queryVar("tenant", "Tenant / 租户", varTenant))
	for _, v := range extra {
		b.WithVariable(v)
	}
	return b
}

// queryVar is a multi-select label_values variable that defaults to All.
func queryVar(name, label, query string) *dashboard.QueryVariableBuilder {
	return dashboard.NewQueryVariableBuilder(name).Label(label).Datasource(datasource).
		Query(dashboard.StringOrMap{String: cog.ToPtr(query)}).Definition(query).
		Refresh(dashboard.VariableRefreshOnTimeRangeChanged).Sort(dashboard.VariableSortAlphabeticalAsc).
		Multi(true).IncludeAll(true).AllValue(".*").
		Current(dashboard.VariableOption{Text: strOrArr("All"), Value: strOrArr("$__all")})
}

func strOrArr(s string) dashboard.StringOrArrayOfString {
	return dashboard.StringOrArrayOfString{String: cog.ToPtr(s)}
}

// sel joins label matchers into one selector body.
func sel(parts ...string) string { return strings.Join(parts, ", ") }
