package dashboards

import (
	"log/slog"
	"os/exec"
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

// TestDCGMRulesLoad parses the rule file with the Prometheus library the
// server embeds (no promtool needed) and checks every record is there.
func TestDCGMRulesLoad(t *testing.T) {
	groups, errs := rulefmt.ParseFile(filepath.Join("rules", "dcgm.yml"), false, model.UTF8Validation, parser.NewParser(parser.Options{}), slog.New(slog.DiscardHandler))
	require.Empty(t, errs)
	var got []string
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			got = append(got, r.Record)
		}
	}
	require.ElementsMatch(t, dcgmRecords, got)
}

// TestDCGMRulesPromtool runs `promtool check rules` and `promtool test
// rules` (Debian's prometheus package; `make deps` installs it) on the
// shipped rules and their unit tests: NVIDIA with MIG, Ascend, Cambricon.
func TestDCGMRulesPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not installed (make deps installs Debian's prometheus package)")
	}
	for _, args := range [][]string{{"check", "rules", "dcgm.yml"}, {"test", "rules", "dcgm_test.yml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = "rules"
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "promtool %v:\n%s", args, out)
	}
}
