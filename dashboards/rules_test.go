package dashboards

import (
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/require"
)

// dcgmRecords are the dcgm-exporter series the rules must provide.
var dcgmRecords = []string{"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_FB_TOTAL",
	"DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_POWER_MGMT_LIMIT"}

// TestDCGMRulesLoad: the DCGM-compatible rule file the alert engine
// evaluates (alerts/rules/dcgm.yml; its promtool unit tests run in
// alerts/rules) records every series the dcgm-exporter dashboards read.
func TestDCGMRulesLoad(t *testing.T) {
	groups, errs := rulefmt.ParseFile(filepath.Join("..", "alerts", "rules", "dcgm.yml"), false, model.UTF8Validation, parser.NewParser(parser.Options{}), slog.New(slog.DiscardHandler))
	require.Empty(t, errs)
	var got []string
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			got = append(got, r.Record)
		}
	}
	require.ElementsMatch(t, dcgmRecords, got)
}
