package dashboards

import "github.com/grafana/grafana-foundation-sdk/go/dashboard"

// nodeBoard: one node's devices and host (pick it in the node variable).
func nodeBoard() *dashboard.DashboardBuilder {
	return newBoard("heteroflow-node", "HeteroFlow · Node detail / 节点详情",
		"The devices and host resources of the selected nodes. / 所选节点的设备与主机资源。").
		WithRow(dashboard.NewRowBuilder("Node / 节点")).
		WithPanel(single("Agent up", "1 while the node's agent is heard from. / 节点代理在线为 1。", unitNone, quarter,
			q(`min(heteroflow_node_up{`+nodeSel+`})`, "up")).Thresholds(thresholds(0.5, 0.5))).
		WithPanel(single("Devices", "Accelerators on the node. / 节点加速卡数。", unitNone, quarter,
			q(`count(hw_gpu_memory_limit_bytes{`+gpuSel+`})`, "devices"))).
		WithPanel(single("Devices held by tasks", "Compute share held by placed tasks. / 任务占用的设备份额。", unitNone, quarter,
			q(`sum(heteroflow_allocated_devices{`+allocSel+`})`, "held"))).
		WithPanel(single("Power draw", "Sum of the node's device power. / 节点设备总功耗。", unitWatts, quarter,
			q(`sum(hw_gpu_power_draw_watts{`+gpuSel+`})`, "power"))).
		WithPanel(grid("Devices", "One row per device: index, model, memory size. / 设备清单。", full,
			instant(`max by (host_name, hw_index, hw_id, hw_vendor, hw_model, hw_driver_version) (hw_gpu_memory_limit_bytes{`+gpuSel+`})`))).
		WithRow(dashboard.NewRowBuilder("Devices / 设备")).
		WithPanel(graph("Utilisation", "Busy fraction per device. / 每卡利用率。", unitRatio, half,
			q(`hw_gpu_utilization_ratio{`+gpuSel+`}`, "{{host_name}} #{{hw_index}}")).Min(0).Max(1)).
		WithPanel(graph("Memory in use", "Device memory used per device. / 每卡显存占用。", unitBytes, half,
			q(`hw_gpu_memory_usage_bytes{`+gpuSel+`}`, "{{host_name}} #{{hw_index}}")).Min(0)).
		WithPanel(graph("Temperature", "Die temperature per device. / 每卡温度。", unitCelsius, half,
			q(`hw_gpu_temperature_celsius{`+gpuSel+`}`, "{{host_name}} #{{hw_index}}"))).
		WithPanel(graph("Power draw", "Power per device. / 每卡功耗。", unitWatts, half,
			q(`hw_gpu_power_draw_watts{`+gpuSel+`}`, "{{host_name}} #{{hw_index}}")).Min(0)).
		// Per-instance memory is what nvidia-smi gives for MIG instances (its
		// utilisation needs DCGM); vNPUs, vDCUs and VFs report theirs too.
		WithPanel(graph("Partition memory in use", "Memory used in each hardware partition (MIG instance, vNPU, vDCU, VF). / 每个硬件分区（MIG 实例、vNPU、vDCU、VF）的显存占用。", unitBytes, full,
			q(`hw_gpu_partition_memory_usage_bytes{`+gpuSel+`}`, "{{host_name}} {{hw_parent}} {{hw_gpu_partition_kind}} {{hw_gpu_partition_id}}")).Min(0)).
		WithRow(dashboard.NewRowBuilder("Host / 主机")).
		WithPanel(graph("CPU busy", "Non-idle CPU time share. / CPU 使用率。", unitRatio, third,
			q(`1 - sum by (host_name) (rate(system_cpu_time_seconds_total{`+hostSel+`, state="idle"}[$__rate_interval])) / sum by (host_name) (rate(system_cpu_time_seconds_total{`+hostSel+`}[$__rate_interval]))`, "{{host_name}}")).Min(0).Max(1)).
		WithPanel(graph("Memory", "Host memory by state. / 主机内存。", unitBytes, third,
			q(`sum by (host_name, state) (system_memory_usage_bytes{`+hostSel+`})`, "{{host_name}} {{state}}")).Min(0)).
		WithPanel(graph("Network", "Bytes per second by direction. / 网络吞吐。", "Bps", third,
			q(`sum by (host_name, direction) (rate(system_network_io_bytes_total{`+hostSel+`}[$__rate_interval]))`, "{{host_name}} {{direction}}")).Min(0))
}
