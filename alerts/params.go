package alerts

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
)

// Param is one user-tunable threshold or duration of a shipped rule: the
// console changes it without PromQL. Threshold rewrites the number on the
// right of the rule's comparison (through the PromQL syntax tree, not
// text); For rewrites the rule's `for`.
type Param struct {
	Key      string  `json:"key"`
	Alert    string  `json:"alert"`
	Severity string  `json:"severity"`
	Kind     string  `json:"kind"` // "threshold" or "for"
	Unit     string  `json:"unit"` // ratio, celsius, seconds, duration, count
	Min      float64 `json:"min"`
	Max      float64 `json:"max"`
	TitleEN  string  `json:"title_en"`
	TitleZH  string  `json:"title_zh"`
}

// Param kinds.
const (
	KindThreshold = "threshold"
	KindFor       = "for"
)

// Params lists the shipped rules' parameters (rules/*.yml mark them with
// "# param <key>"); their defaults are the values in the files.
var Params = []Param{
	{"gpu_load_warn", "GPUHighLoad", "WARN", KindThreshold, "ratio", 0, 1, "GPU load warning threshold", "GPU 高负载告警阈值"},
	{"gpu_load_warn_for", "GPUHighLoad", "WARN", KindFor, "duration", 0, 0, "GPU load warning duration", "GPU 高负载告警持续时间"},
	{"gpu_load_error", "GPUHighLoad", "ERROR", KindThreshold, "ratio", 0, 1, "GPU load error threshold", "GPU 高负载严重阈值"},
	{"gpu_load_error_for", "GPUHighLoad", "ERROR", KindFor, "duration", 0, 0, "GPU load error duration", "GPU 高负载严重持续时间"},
	{"gpu_memory_warn", "GPUMemoryPressure", "WARN", KindThreshold, "ratio", 0, 1, "GPU memory warning threshold", "显存不足告警阈值"},
	{"gpu_memory_warn_for", "GPUMemoryPressure", "WARN", KindFor, "duration", 0, 0, "GPU memory warning duration", "显存不足告警持续时间"},
	{"gpu_memory_error", "GPUMemoryPressure", "ERROR", KindThreshold, "ratio", 0, 1, "GPU memory error threshold", "显存不足严重阈值"},
	{"gpu_memory_error_for", "GPUMemoryPressure", "ERROR", KindFor, "duration", 0, 0, "GPU memory error duration", "显存不足严重持续时间"},
	{"gpu_temperature_warn", "GPUTemperatureHigh", "WARN", KindThreshold, "celsius", 0, 150, "GPU temperature warning (°C)", "GPU 温度告警阈值（°C）"},
	{"gpu_temperature_error", "GPUTemperatureHigh", "ERROR", KindThreshold, "celsius", 0, 150, "GPU temperature error (°C)", "GPU 温度严重阈值（°C）"},
	{"gpu_power_cap", "GPUPowerCapped", "WARN", KindThreshold, "ratio", 0, 2, "Power draw share of the limit", "功耗占上限比例"},
	{"gpu_power_cap_for", "GPUPowerCapped", "WARN", KindFor, "duration", 0, 0, "Power cap duration", "功耗封顶持续时间"},
	{"gpu_ecc_errors", "GPUECCErrors", "WARN", KindThreshold, "count", 0, 1e9, "ECC errors in 15 minutes above", "15 分钟内 ECC 错误数超过"},
	{"node_offline_for", "NodeOffline", "ERROR", KindFor, "duration", 0, 0, "Node offline for", "节点离线持续时间"},
	{"task_pending_seconds", "TasksPendingTooLong", "WARN", KindThreshold, "seconds", 0, 30 * 86400, "Task queued longer than (s)", "任务排队超过（秒）"},
	{"fragmentation", "FragmentationHigh", "INFO", KindThreshold, "ratio", 0, 1, "Fragmentation score above", "碎片率超过"},
	{"fragmentation_for", "FragmentationHigh", "INFO", KindFor, "duration", 0, 0, "Fragmentation duration", "碎片率持续时间"},
	{"ingest_error_ratio", "MetricsIngestFailing", "WARN", KindThreshold, "ratio", 0, 1, "Failed metric pushes share above", "指标写入失败率超过"},
}

// ParamValues are the user's settings by key (numbers for thresholds,
// Prometheus durations such as "10m" for `for`); missing keys keep the
// shipped default.
type ParamValues map[string]string

// SettingKey is the store setting holding ParamValues as JSON.
const SettingKey = "alerts.params"

// ParamState is a parameter with its default and current value.
type ParamState struct {
	Param
	Default string `json:"default"`
	Value   string `json:"value"`
}

// DecodeParams reads the stored JSON ("" = none).
func DecodeParams(s string) (ParamValues, error) {
	v := ParamValues{}
	if s == "" {
		return v, nil
	}
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return nil, fmt.Errorf("alert parameters: %w", err)
	}
	return v, nil
}

func paramByKey(key string) (Param, bool) {
	for _, p := range Params {
		if p.Key == key {
			return p, true
		}
	}
	return Param{}, false
}

// Validate checks every value: a known key, a number within bounds or a
// duration.
func (v ParamValues) Validate() error {
	for k, val := range v {
		p, ok := paramByKey(k)
		if !ok {
			return fmt.Errorf("unknown alert parameter %q", k)
		}
		switch p.Kind {
		case KindThreshold:
			f, err := strconv.ParseFloat(val, 64)
			if err != nil {
				return fmt.Errorf("%s: %q is not a number", k, val)
			}
			if f < p.Min || f > p.Max {
				return fmt.Errorf("%s: %v is outside [%v, %v]", k, f, p.Min, p.Max)
			}
		case KindFor:
			d, err := model.ParseDuration(val)
			if err != nil {
				return fmt.Errorf("%s: %q is not a duration such as 5m: %v", k, val, err)
			}
			if time.Duration(d) > 7*24*time.Hour {
				return fmt.Errorf("%s: %s is longer than 7 days", k, val)
			}
		}
	}
	return nil
}

// comparison finds the outermost comparison with a number on its right.
func comparison(e parser.Expr) *parser.NumberLiteral {
	var found *parser.NumberLiteral
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if found != nil {
			return nil
		}
		if b, ok := n.(*parser.BinaryExpr); ok && b.Op.IsComparisonOperator() {
			if num, ok := b.RHS.(*parser.NumberLiteral); ok {
				found = num
			}
		}
		return nil
	})
	return found
}

// applyParams rewrites the rules of rgs that parameters address and
// reports each parameter's default (the value found before rewriting).
func applyParams(rgs *rulefmt.RuleGroups, v ParamValues, p parser.Parser) (map[string]string, error) {
	defaults := map[string]string{}
	for gi := range rgs.Groups {
		for ri := range rgs.Groups[gi].Rules {
			r := &rgs.Groups[gi].Rules[ri]
			for _, prm := range Params {
				if r.Alert != prm.Alert || r.Labels["severity"] != prm.Severity {
					continue
				}
				switch prm.Kind {
				case KindFor:
					defaults[prm.Key] = r.For.String()
					if val, ok := v[prm.Key]; ok {
						d, err := model.ParseDuration(val)
						if err != nil {
							return nil, fmt.Errorf("%s: %w", prm.Key, err)
						}
						r.For = d
					}
				case KindThreshold:
					expr, err := p.ParseExpr(r.Expr)
					if err != nil {
						return nil, fmt.Errorf("%s: %w", r.Alert, err)
					}
					num := comparison(expr)
					if num == nil {
						return nil, fmt.Errorf("parameter %s: %s has no comparison with a number", prm.Key, r.Alert)
					}
					defaults[prm.Key] = strconv.FormatFloat(num.Val, 'g', -1, 64)
					if val, ok := v[prm.Key]; ok {
						f, err := strconv.ParseFloat(val, 64)
						if err != nil {
							return nil, fmt.Errorf("%s: %w", prm.Key, err)
						}
						num.Val = f
						r.Expr = expr.String()
					}
				}
			}
		}
	}
	return defaults, nil
}
