package dashboards

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// query is one PromQL expression a committed dashboard runs: a panel
// target or a variable's label_values selector.
type query struct {
	Board, Panel, Ref string
	Expr              string
	Instant           bool
	Variable          bool // a label_values(selector, label) variable; Expr is the selector
}

func (q query) String() string { return fmt.Sprintf("%s / %s / %s", q.Board, q.Panel, q.Ref) }

// loadQueries reads every query of the committed JSON in json/.
func loadQueries(t testing.TB) []query {
	t.Helper()
	var out []query
	for _, b := range All() {
		raw, err := os.ReadFile(filepath.Join("json", b.File))
		require.NoError(t, err)
		var d struct {
			Panels []struct {
				Title   string
				Targets []struct {
					Expr    string `json:"expr"`
					RefID   string `json:"refId"`
					Instant bool   `json:"instant"`
				}
			}
			Templating struct {
				List []struct {
					Name  string
					Type  string
					Query any
				}
			}
		}
		require.NoError(t, json.Unmarshal(raw, &d), b.File)
		for _, p := range d.Panels {
			for _, tg := range p.Targets {
				out = append(out, query{Board: b.UID, Panel: p.Title, Ref: tg.RefID, Expr: tg.Expr, Instant: tg.Instant})
			}
		}
		for _, v := range d.Templating.List {
			if v.Type != "query" {
				continue
			}
			s, _ := v.Query.(string)
			sel, ok := labelValuesSelector(s)
			require.True(t, ok, "%s: variable %s: %q is not label_values(selector, label)", b.File, v.Name, s)
			out = append(out, query{Board: b.UID, Panel: "variable " + v.Name, Ref: v.Name, Expr: sel, Instant: true, Variable: true})
		}
	}
	return out
}

// labelValuesSelector is the series selector of Grafana's
// label_values(selector, label) variable query.
func labelValuesSelector(s string) (string, bool) {
	body, ok := strings.CutPrefix(s, "label_values(")
	if !ok || !strings.HasSuffix(body, ")") {
		return "", false
	}
	body = strings.TrimSuffix(body, ")")
	i := strings.LastIndex(body, ",")
	if i < 0 {
		return "", false
	}
	return strings.TrimSpace(body[:i]), true
}

// expand replaces Grafana's variables the way Grafana does with every
// variable on "All" (the allValue ".*") and the given window.
func expand(expr, rangeDur string, rangeSeconds int) string {
	r := strings.NewReplacer(
		"$__rate_interval", "1m", "$__interval", "15s",
		"$__range_s", fmt.Sprint(rangeSeconds), "$__range", rangeDur,
		"$cluster", ".*", "$vendor", ".*", "$model", ".*", "$node", ".*", "$tenant", ".*", "$device", ".*")
	return r.Replace(expr)
}

// TestDeviceListsKeepMIGGPUs: a GPU in MIG mode reports no utilisation
// (nvidia-smi prints N/A, which the receivers keep absent rather than 0), so
// a device, node or vendor list read from utilisation alone would drop a
// MIG-only node. Every device-series variable also reads the memory limit.
func TestDeviceListsKeepMIGGPUs(t *testing.T) {
	t.Parallel()
	n := 0
	for _, q := range loadQueries(t) {
		if !q.Variable || !strings.Contains(q.Expr, "hw_gpu_") {
			continue
		}
		n++
		require.Contains(t, q.Expr, "hw_gpu_memory_limit_bytes", "%s: %s", q, q.Expr)
	}
	require.NotZero(t, n)
}
