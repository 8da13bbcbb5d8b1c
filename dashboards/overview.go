package dashboards

import "github.com/grafana/grafana-foundation-sdk/go/dashboard"

// overviewBoard: the whole fleet at a glance, split by vendor.
func overviewBoard() *dashboard.DashboardBuilder {
	return newBoard("heteroflow-overview", "HeteroFlow · Cluster overview / 集群总览",
		"Devices, utilisation, memory, power and health of the fleet by vendor. / 按厂商查看设备数量、利用率、显存、功耗与健康。").
		WithRow(dashboard.NewRowBuilder("Fleet / 集群")).
		WithPanel(single("Nodes online", "Nodes whose agent is heard from. / 在线节点数。", unitNone, quarter,
			q(`sum(heteroflow_node_up{`+nodeSel+`})`, "online"))).
		WithPanel(single("Devices", "Accelerators reported by the vendor receivers. / 厂商采集器上报的加速卡数。", unitNone, quarter,
			q(`count(hw_gpu_memory_limit_bytes{`+gpuSel+`})`, "devices"))).
		WithPanel(single("Queued tasks", "Tasks waiting for placement. / 排队中的任务数。", unitNone, quarter,
			q(`sum(heteroflow_scheduler_queue_length{`+srvSel+`})`, "queued"))).
		WithPanel(single("Fragmentation", "Share of free compute stranded on partly used devices (0 = none). / 碎片化程度。", unitRatio, quarter,
			q(`max(heteroflow_fragmentation_score{`+srvSel+`})`, "fragmentation")).Thresholds(thresholds(0.3, 0.6)).Min(0).Max(1)).
		WithPanel(bars("Devices by vendor", "Device count per vendor. / 各厂商设备数。", unitNone, third,
			q(`count by (hw_vendor) (hw_gpu_memory_limit_bytes{`+gpuSel+`})`, "{{hw_vendor}}"))).
		WithPanel(grid("Models", "Device count per vendor and model. / 各型号设备数。", third,
			instant(`count by (hw_vendor, hw_model) (hw_gpu_memory_limit_bytes{`+gpuSel+`})`))).
		WithPanel(graph("Devices by allocation state", "Free, fragmented and allocated devices of online nodes. / 设备分配状态。", unitNone, third,
			q(`sum by (state) (heteroflow_devices{`+srvSel+`})`, "{{state}}")).Min(0)).
		WithRow(dashboard.NewRowBuilder("By vendor / 按厂商")).
		WithPanel(graph("Utilisation by vendor", "Mean busy fraction of the vendor's devices. / 各厂商平均利用率。", unitRatio, half,
			q(`avg by (hw_vendor) (hw_gpu_utilization_ratio{`+gpuSel+`})`, "{{hw_vendor}}")).Min(0).Max(1)).
		WithPanel(graph("Memory in use by vendor", "Device memory used over device memory size. / 各厂商显存占用率。", unitRatio, half,
			q(`sum by (hw_vendor) (hw_gpu_memory_usage_bytes{`+gpuSel+`}) / sum by (hw_vendor) (hw_gpu_memory_limit_bytes{`+gpuSel+`})`, "{{hw_vendor}}")).Min(0).Max(1)).
		WithPanel(graph("Power draw by vendor", "Sum of instantaneous device power. / 各厂商总功耗。", unitWatts, half,
			q(`sum by (hw_vendor) (hw_gpu_power_draw_watts{`+gpuSel+`})`, "{{hw_vendor}}")).Min(0)).
		WithPanel(graph("Hottest device by vendor", "Highest die temperature per vendor. / 各厂商最高温度。", unitCelsius, half,
			q(`max by (hw_vendor) (hw_gpu_temperature_celsius{`+gpuSel+`})`, "{{hw_vendor}}"))).
		WithPanel(graph("Devices not healthy by vendor", "Devices whose reported state is degraded or failed. / 非健康设备数。", unitNone, full,
			q(`sum by (hw_vendor, hw_state) (hw_status{`+gpuSel+`, hw_state!="ok"})`, "{{hw_vendor}} {{hw_state}}")).Min(0))
}
