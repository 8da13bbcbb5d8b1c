package metering

import (
	"fmt"
	"io"
	"math"

	"github.com/xuri/excelize/v2"
)

// WriteXLSX writes the report as a workbook: a summary sheet and one sheet
// per section, numbers as numbers.
func (r *UsageReport) WriteXLSX(w io.Writer) error {
	f := excelize.NewFile()
	defer func() { _ = f.Close() }()
	const summary = "summary"
	if err := f.SetSheetName("Sheet1", summary); err != nil {
		return err
	}
	rows := [][]any{
		{"period", r.Period}, {"from", r.From}, {"to (exclusive)", r.To}, {"tenant", r.Tenant}, {"project", r.Project},
		{"user", r.User}, {"currency", r.Currency}, {"provisional", r.Provisional},
		{"generated_at", r.GeneratedAt.Format("2006-01-02T15:04:05Z")}, {"total cost", r.Total.Cost},
		{"device_hours", r.Total.Hours.DeviceHours}, {"memory_gib_hours", r.Total.Hours.MemoryGiBHours},
		{"compute_percent_hours", r.Total.Hours.ComputePercentHours}, {"unpriced_device_hours", r.UnpricedHours},
	}
	if err := writeRows(f, summary, rows); err != nil {
		return err
	}
	for _, t := range r.tables()[1:] {
		if _, err := f.NewSheet(t.name); err != nil {
			return err
		}
		head := make([]any, 0, len(t.key)+len(numHeader))
		for _, k := range t.key {
			head = append(head, k)
		}
		for _, h := range numHeader {
			head = append(head, h)
		}
		rows := [][]any{head}
		for i := range t.lines {
			l := &t.lines[i]
			row := make([]any, 0, len(head))
			for _, k := range t.key {
				if k == "task_id" {
					row = append(row, l.TaskID)
					continue
				}
				row = append(row, keyValue(l, k))
			}
			for _, v := range numbers(l) {
				if math.IsNaN(v) {
					row = append(row, "") // not measured
					continue
				}
				row = append(row, v)
			}
			rows = append(rows, row)
		}
		if err := writeRows(f, t.name, rows); err != nil {
			return err
		}
	}
	if _, err := f.WriteTo(w); err != nil {
		return fmt.Errorf("xlsx: %w", err)
	}
	return nil
}

func writeRows(f *excelize.File, sheet string, rows [][]any) error {
	for i, row := range rows {
		cell, err := excelize.CoordinatesToCellName(1, i+1)
		if err != nil {
			return err
		}
		if err := f.SetSheetRow(sheet, cell, &row); err != nil {
			return fmt.Errorf("xlsx %s: %w", sheet, err)
		}
	}
	return nil
}
