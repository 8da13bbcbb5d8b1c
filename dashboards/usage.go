package dashboards

import "github.com/grafana/grafana-foundation-sdk/go/dashboard"

// billSel selects billing's usage counters (the server's registry).
const billSel = srvSel + `, tenant=~"$tenant", vendor=~"$vendor", model=~"$model"`

// usageBoard: who held which devices for how long, and the energy they drew.
// Device-hours are the mean held share over the window times its length.
func usageBoard() *dashboard.DashboardBuilder {
	return newBoard("heteroflow-usage", "HeteroFlow · Usage and billing / 用量与计费",
		"Device-hours held by tenant and vendor over the selected window, and the energy the devices drew. / 按租户与厂商统计的卡时与能耗。").
		WithRow(dashboard.NewRowBuilder("Usage / 用量")).
		WithPanel(single("Device-hours", "Device-hours held by placed tasks in the window. / 窗口内总卡时。", unitNone, third,
			q(`sum(avg_over_time(heteroflow_allocated_devices{`+allocSel+`}[$__range])) * $__range_s / 3600`, "device-hours")).Decimals(2)).
		WithPanel(single("Devices held now", "Compute share held by placed tasks now. / 当前占用设备份额。", unitNone, third,
			q(`sum(heteroflow_allocated_devices{`+allocSel+`})`, "held"))).
		WithPanel(single("Energy", "Energy the selected devices drew in the window. / 窗口内能耗。", "kwatth", third,
			q(`sum(avg_over_time(hw_gpu_power_draw_watts{`+gpuSel+`}[$__range])) * $__range_s / 3600 / 1000`, "kWh")).Decimals(2)).
		WithPanel(bars("Device-hours by tenant", "Device-hours per tenant in the window. / 各租户卡时。", unitNone, half,
			q(`sum by (tenant) (avg_over_time(heteroflow_allocated_devices{`+allocSel+`}[$__range])) * $__range_s / 3600`, "{{tenant}}"))).
		WithPanel(bars("Device-hours by vendor", "Device-hours per vendor in the window. / 各厂商卡时。", unitNone, half,
			q(`sum by (vendor) (avg_over_time(heteroflow_allocated_devices{`+allocSel+`}[$__range])) * $__range_s / 3600`, "{{vendor}}"))).
		WithPanel(graph("Devices held by tenant and vendor", "Held compute share over time. / 设备占用趋势。", unitNone, half,
			q(`sum by (tenant, vendor) (heteroflow_allocated_devices{`+allocSel+`})`, "{{tenant}} {{vendor}}")).Min(0)).
		WithPanel(graph("Utilisation of the fleet by vendor", "How busy the devices were while held or idle. / 各厂商设备利用率。", unitRatio, half,
			q(`avg by (hw_vendor) (hw_gpu_utilization_ratio{`+gpuSel+`})`, "{{hw_vendor}}")).Min(0).Max(1)).
		WithPanel(grid("Device-hours by tenant and vendor", "The window's device-hours, one row per tenant and vendor. / 租户与厂商卡时明细。", full,
			instant(`sum by (tenant, vendor) (avg_over_time(heteroflow_allocated_devices{`+allocSel+`}[$__range])) * $__range_s / 3600`))).
		// Billing's own figures: the metering leader's usage records (the
		// ledger's intervals, not samples), counted as they are written.
		WithRow(dashboard.NewRowBuilder("Billed usage / 计费用量")).
		WithPanel(bars("Billed device-hours by tenant", "Device-hours (weighted by each slice's dominant share) metered in the window. / 窗口内计费卡时（按租户）。", unitNone, half,
			q(`sum by (tenant) (increase(heteroflow_billing_device_seconds_total{`+billSel+`}[$__range])) / 3600`, "{{tenant}}"))).
		WithPanel(bars("Billed device-hours by model", "Metered device-hours per vendor and model in the window. / 窗口内计费卡时（按型号）。", unitNone, half,
			q(`sum by (vendor, model) (increase(heteroflow_billing_device_seconds_total{`+billSel+`}[$__range])) / 3600`, "{{vendor}} {{model}}"))).
		WithPanel(graph("Billed memory by tenant", "Device memory GiB-hours metered in the window. / 窗口内计费显存 GiB·小时。", unitNone, half,
			q(`sum by (tenant) (increase(heteroflow_billing_memory_gib_seconds_total{`+billSel+`}[$__range])) / 3600`, "{{tenant}}")).Min(0)).
		WithPanel(graph("Usage records written", "Usage records the metering leader writes per second. / 每秒写入的用量记录。", unitOps, half,
			q(`sum by (tenant) (rate(heteroflow_billing_usage_records_total{`+srvSel+`, tenant=~"$tenant"}[$__rate_interval]))`, "{{tenant}}")).Min(0))
}
