package metering

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Formats of exported reports.
const (
	FormatJSON = "json"
	FormatCSV  = "csv"
	FormatXLSX = "xlsx"
)

// ContentType of a format.
func ContentType(format string) string {
	switch format {
	case FormatCSV:
		return "text/csv; charset=utf-8"
	case FormatXLSX:
		return "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
	}
	return "application/json"
}

// table is one section of an exported report.
type table struct {
	name  string
	lines []ReportLine
	key   []string // the ReportLine fields that name a row
}

var numHeader = []string{"slice_hours", "device_hours", "memory_gib_hours", "compute_percent_hours", "cost",
	"measured_hours", "measured_compute_percent_hours", "measured_memory_gib_hours", "compute_efficiency", "memory_efficiency"}

func (r *UsageReport) tables() []table {
	total := r.Total
	return []table{
		{"total", []ReportLine{total}, nil},
		{"daily", r.Daily, []string{"day"}},
		{"by_vendor", r.ByVendor, []string{"vendor", "model", "qos"}},
		{"by_tenant", r.ByTenant, []string{"tenant"}},
		{"by_project", r.ByProject, []string{"tenant", "project"}},
		{"by_user", r.ByUser, []string{"user", "tenant"}},
		{"top_tasks", r.TopTasks, []string{"task_id", "tenant", "project", "user"}},
	}
}

func keyValue(l *ReportLine, k string) string {
	switch k {
	case "day":
		return l.Day
	case "vendor":
		return l.Vendor
	case "model":
		return l.Model
	case "qos":
		return l.QoS
	case "tenant":
		return l.Tenant
	case "project":
		return l.Project
	case "user":
		return l.User
	case "task_id":
		return strconv.FormatInt(l.TaskID, 10)
	}
	return ""
}

func numbers(l *ReportLine) []float64 {
	ce, me := math.NaN(), math.NaN() // not measured: empty cells
	if e := l.Efficiency; e != nil {
		ce, me = e.Compute, e.Memory
	}
	return []float64{l.Hours.SliceHours, l.Hours.DeviceHours, l.Hours.MemoryGiBHours, l.Hours.ComputePercentHours, l.Cost,
		l.Hours.MeasuredHours, l.Hours.MeasuredComputePercentHours, l.Hours.MeasuredMemoryGiBHours, ce, me}
}

func fmtNum(v float64) string {
	if math.IsNaN(v) {
		return ""
	}
	return strconv.FormatFloat(v, 'f', 6, 64)
}

// WriteCSV writes the report as CSV: one row per line of every section,
// with the section's name in the first column, and a header row first.
func (r *UsageReport) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	head := append([]string{"section", "period", "from", "to", "currency", "day", "tenant", "project", "user",
		"vendor", "model", "qos", "task_id"}, numHeader...)
	if err := cw.Write(head); err != nil {
		return err
	}
	for _, t := range r.tables() {
		for i := range t.lines {
			l := &t.lines[i]
			task := ""
			if l.TaskID != 0 {
				task = strconv.FormatInt(l.TaskID, 10)
			}
			row := []string{t.name, r.Period, r.From, r.To, r.Currency, l.Day, csvText(l.Tenant), csvText(l.Project),
				csvText(l.User), csvText(l.Vendor), csvText(l.Model), csvText(l.QoS), task}
			for _, v := range numbers(l) {
				row = append(row, fmtNum(v))
			}
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("csv: %w", err)
	}
	return nil
}

// csvText keeps a text cell from being read as a formula by a spreadsheet
// (CSV injection): a model name comes from an agent's vendor CLI, user and
// tenant names from people, and a cell starting with = + - @ or a tab or
// carriage return would run as a formula when the export is opened in
// Excel or LibreOffice. Such a cell gets a leading apostrophe, which the
// spreadsheet shows as text. (The xlsx export writes typed string cells,
// which are never formulas.)
func csvText(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// WriteJSON writes the report as indented JSON.
func (r *UsageReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
