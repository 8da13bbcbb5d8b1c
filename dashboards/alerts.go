package dashboards

import "github.com/grafana/grafana-foundation-sdk/go/dashboard"

// alertSel selects the rule engine's ALERTS series (Prometheus' shape:
// alertname, alertstate pending|firing, and the rule's labels).
const alertSel = `cluster=~"$cluster"`

// alertsBoard: what the alert rules say now and over time.
func alertsBoard() *dashboard.DashboardBuilder {
	return newBoard("heteroflow-alerts", "HeteroFlow · Alerts / 告警",
		"Firing and pending alerts from the rule engine, and the device health they are built on. / 规则引擎的告警与设备健康。").
		WithRow(dashboard.NewRowBuilder("Alerts / 告警")).
		WithPanel(single("Firing", "Alerts firing now. / 正在触发的告警。", unitNone, third,
			q(`count(ALERTS{`+alertSel+`, alertstate="firing"}) or vector(0)`, "firing")).Thresholds(thresholds(1, 1))).
		WithPanel(single("Pending", "Alerts whose condition holds but not yet for long enough. / 待触发的告警。", unitNone, third,
			q(`count(ALERTS{`+alertSel+`, alertstate="pending"}) or vector(0)`, "pending"))).
		WithPanel(single("Devices not healthy", "Devices reporting degraded or failed. / 非健康设备数。", unitNone, third,
			q(`sum(hw_status{`+gpuSel+`, hw_state!="ok"})`, "not ok")).Thresholds(thresholds(1, 1))).
		WithPanel(graph("Firing by severity", "Firing alerts over time by severity. / 按级别统计的触发告警。", unitNone, half,
			q(`count by (severity) (ALERTS{`+alertSel+`, alertstate="firing"})`, "{{severity}}")).Min(0)).
		WithPanel(graph("Firing by rule", "Firing alerts over time by rule. / 按规则统计的触发告警。", unitNone, half,
			q(`count by (alertname) (ALERTS{`+alertSel+`, alertstate="firing"})`, "{{alertname}}")).Min(0)).
		WithPanel(grid("Active alerts", "Every pending or firing alert with its labels. / 当前告警清单。", full,
			instant(`ALERTS{`+alertSel+`}`))).
		WithPanel(graph("Device health by state", "Devices per reported state. / 各健康状态的设备数。", unitNone, full,
			q(`sum by (hw_vendor, hw_state) (hw_status{`+gpuSel+`})`, "{{hw_vendor}} {{hw_state}}")).Min(0))
}
