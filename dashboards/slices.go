package dashboards

import "github.com/grafana/grafana-foundation-sdk/go/dashboard"

// partsSel selects partitions of the chosen vendors, models and nodes.
const partsSel = `cluster=~"$cluster", hw_vendor=~"$vendor", hw_model=~"$model", host_name=~"$node"`

// slicesBoard: how device capacity is cut up and how much of it is stranded.
func slicesBoard() *dashboard.DashboardBuilder {
	return newBoard("heteroflow-slices", "HeteroFlow · Slices and fragmentation / 切片与碎片",
		"Hardware partitions, device shares held by tasks and free capacity stranded on partly used devices. / 分区、切片占用与碎片化。").
		WithRow(dashboard.NewRowBuilder("Fragmentation / 碎片")).
		WithPanel(single("Fragmentation score", "Share of free compute on partly used devices; 0 means every free unit sits on a whole free device. / 碎片化分数。", unitRatio, third,
			q(`max(heteroflow_fragmentation_score{`+srvSel+`})`, "score")).Thresholds(thresholds(0.3, 0.6)).Min(0).Max(1)).
		WithPanel(single("Whole free devices", "Devices with nothing placed on them. / 完全空闲的设备。", unitNone, third,
			q(`sum(heteroflow_devices{`+srvSel+`, state="free"})`, "free"))).
		WithPanel(single("Partly used devices", "Devices with free capacity beside a placed slice. / 部分占用的设备。", unitNone, third,
			q(`sum(heteroflow_devices{`+srvSel+`, state="fragmented"})`, "fragmented"))).
		WithPanel(graph("Fragmentation over time", "Score after each scheduler tick. / 碎片化趋势。", unitRatio, half,
			q(`max(heteroflow_fragmentation_score{`+srvSel+`})`, "score")).Min(0).Max(1)).
		WithPanel(graph("Devices by allocation state", "Free, fragmented, allocated. / 设备分配状态。", unitNone, half,
			q(`sum by (state) (heteroflow_devices{`+srvSel+`})`, "{{state}}")).Min(0)).
		WithRow(dashboard.NewRowBuilder("Slices / 切片")).
		WithPanel(graph("Device share held by vendor", "Compute share held by placed tasks (half a device counts 0.5). / 各厂商被占用的设备份额。", unitNone, half,
			q(`sum by (vendor) (heteroflow_allocated_devices{`+allocSel+`})`, "{{vendor}}")).Min(0)).
		WithPanel(graph("Device share held by node", "Compute share held per node. / 各节点被占用的设备份额。", unitNone, half,
			q(`sum by (node) (heteroflow_allocated_devices{`+allocSel+`})`, "{{node}}")).Min(0)).
		WithRow(dashboard.NewRowBuilder("Hardware partitions / 硬件分区")).
		WithPanel(bars("Partitions by profile", "MIG instances, vNPUs, VFs and vDCUs by kind and profile. / 各规格分区数量。", unitNone, half,
			q(`count by (hw_vendor, hw_gpu_partition_kind, hw_gpu_partition_profile) (hw_gpu_partition_memory_limit_bytes{`+partsSel+`})`,
				"{{hw_vendor}} {{hw_gpu_partition_kind}} {{hw_gpu_partition_profile}}"))).
		WithPanel(graph("Partition memory in use by device", "Memory used over memory size of each partitioned device's partitions. / 分区显存占用率。", unitRatio, half,
			q(`sum by (host_name, hw_parent) (hw_gpu_partition_memory_usage_bytes{`+partsSel+`}) / sum by (host_name, hw_parent) (hw_gpu_partition_memory_limit_bytes{`+partsSel+`})`,
				"{{host_name}} {{hw_parent}}")).Min(0).Max(1))
}
