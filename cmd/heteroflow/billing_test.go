package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestBillingReportCLI(t *testing.T) {
	s := startApp(t)
	r := cli(t, map[string]string{"HETEROFLOW_SERVER": s.base}, adminPassword+"\n", "login", "--username", "admin", "--password-stdin")
	require.Equal(t, 0, r.code, r.stderr)
	month := time.Now().UTC().Format("2006-01")

	r = cli(t, nil, "", "billing", "report", "--month", month, "--format", "csv")
	require.Equal(t, 0, r.code, r.stderr)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.True(t, strings.HasPrefix(lines[0], "section,period,from,to,currency"), r.stdout)
	require.True(t, strings.HasSuffix(lines[0], ",measured_hours,measured_compute_percent_hours,measured_memory_gib_hours,compute_efficiency,memory_efficiency"),
		"measured usage and efficiency are columns: %s", lines[0])
	require.True(t, strings.HasPrefix(lines[1], "total,month,"+month+"-01,"), r.stdout)

	r = cli(t, nil, "", "billing", "report", "--month", month, "--format", "json")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, `"period": "month"`)

	// The global --json means JSON here as on every client command.
	r = cli(t, nil, "", "billing", "report", "--month", month, "--json")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, `"period": "month"`, "--json prints the JSON report, not CSV")

	out := filepath.Join(t.TempDir(), "usage.xlsx")
	r = cli(t, nil, "", "billing", "report", "--month", month, "--format", "xlsx", "-o", out)
	require.Equal(t, 0, r.code, r.stderr)
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	require.Equal(t, "PK", string(b[:2]), "an OOXML workbook is a zip")

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--tenant", "nobody", "--month", month}, "not_found"},
		{[]string{"--month", "2099-01"}, "future"},
		{[]string{"--month", "11/2026"}, "YYYY-MM"},
		{[]string{"--format", "pdf"}, "--format must be csv, xlsx or json"},
		{[]string{"--format", "xlsx"}, "-o FILE"},
		{[]string{"--format", "csv", "--json"}, "contradict"},
	} {
		r = cli(t, nil, "", append([]string{"billing", "report"}, tc.args...)...)
		require.NotEqual(t, 0, r.code, "%v: %s", tc.args, r.stdout)
		require.Contains(t, r.stderr, tc.want, "%v", tc.args)
	}
}
