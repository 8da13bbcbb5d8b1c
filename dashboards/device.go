package dashboards

import "github.com/grafana/grafana-foundation-sdk/go/dashboard"

// devSel narrows gpuSel to the device variable (hw.id).
const devSel = gpuSel + `, hw_id=~"$device"`

// partSel selects the partitions of the chosen devices (hw.parent is the
// device's hw.id).
const partSel = `cluster=~"$cluster", hw_vendor=~"$vendor", hw_model=~"$model", host_name=~"$node", hw_parent=~"$device"`

// deviceBoard: one device in depth, with its MIG / vNPU / VF partitions.
func deviceBoard() *dashboard.DashboardBuilder {
	return newBoard("heteroflow-device", "HeteroFlow · Device detail / 设备详情",
		"Utilisation, memory, temperature, power and health of the selected devices and their partitions (MIG, vNPU, VF, vDCU). / 设备及其分区的详细指标。",
		queryVar("device", "Device / 设备", varDevice)).
		WithRow(dashboard.NewRowBuilder("Device / 设备")).
		WithPanel(graph("Utilisation", "Busy fraction. / 利用率。", unitRatio, half,
			q(`hw_gpu_utilization_ratio{`+devSel+`}`, "{{host_name}} #{{hw_index}} {{hw_model}}")).Min(0).Max(1)).
		WithPanel(graph("Memory used and size", "Device memory in use against its size. / 显存占用与容量。", unitBytes, half,
			q(`hw_gpu_memory_usage_bytes{`+devSel+`}`, "used {{host_name}} #{{hw_index}}"),
			q(`hw_gpu_memory_limit_bytes{`+devSel+`}`, "size {{host_name}} #{{hw_index}}")).Min(0)).
		WithPanel(graph("Temperature", "Die temperature. / 温度。", unitCelsius, half,
			q(`hw_gpu_temperature_celsius{`+devSel+`}`, "{{host_name}} #{{hw_index}}")).Thresholds(thresholds(80, 90))).
		WithPanel(graph("Power draw and limit", "Power against the enforced limit. / 功耗与功耗上限。", unitWatts, half,
			q(`hw_gpu_power_draw_watts{`+devSel+`}`, "draw {{host_name}} #{{hw_index}}"),
			q(`hw_gpu_power_limit_watts{`+devSel+`}`, "limit {{host_name}} #{{hw_index}}")).Min(0)).
		WithPanel(graph("Health", "1 for the state the device reports now (ok, degraded, failed). / 设备健康状态。", unitNone, half,
			q(`hw_status{`+devSel+`} == 1`, "{{host_name}} #{{hw_index}} {{hw_state}}")).Min(0).Max(1)).
		WithPanel(grid("Identity", "Model, driver version and PCI bus id. / 设备型号、驱动与总线地址。", half,
			instant(`max by (hw_id, hw_index, hw_model, hw_driver_version, hw_bus_id, host_name) (hw_gpu_memory_limit_bytes{`+devSel+`})`))).
		WithRow(dashboard.NewRowBuilder("Partitions / 分区")).
		WithPanel(graph("Partition memory in use", "Memory used per MIG instance, vNPU, VF or vDCU. / 每个分区的显存占用。", unitBytes, half,
			q(`hw_gpu_partition_memory_usage_bytes{`+partSel+`}`, "{{hw_gpu_partition_kind}} {{hw_gpu_partition_id}} {{hw_gpu_partition_profile}}")).Min(0)).
		WithPanel(grid("Partitions", "Kind, id, profile and memory size of each partition. / 分区清单。", half,
			instant(`max by (hw_parent, hw_gpu_partition_kind, hw_gpu_partition_id, hw_gpu_partition_profile) (hw_gpu_partition_memory_limit_bytes{`+partSel+`})`)))
}
