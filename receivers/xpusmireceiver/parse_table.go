package xpusmireceiver

import (
	"fmt"
	"strings"

	"github.com/heteroflow/heteroflow/receivers/inventory"
	pu "github.com/heteroflow/heteroflow/receivers/smi/parseutil"
)

// ParseTable parses the xpu_smi DEVICES table: "DevID | PCI Addr | Model |
// SN | INODE | UseRate | L3 | Memory", memory as "used / total MB". The
// VIDEO and PROCESSES tables that follow are ignored. Columns are found by
// header name, so added columns do not shift the mapping.
func ParseTable(data []byte) (*inventory.Snapshot, error) {
	if err := pu.CheckSize(data); err != nil {
		return nil, err
	}
	if IsIntel(data) {
		return nil, ErrIntelXPUSMI
	}
	lines := pu.Lines(data)
	snap := &inventory.Snapshot{
		Vendor:         inventory.VendorKunlunxin,
		DriverVersion:  pu.HeaderValue(lines, "Driver Version:"),
		RuntimeVersion: pu.HeaderValue(lines, "Runtime Version:"),
		Devices:        []inventory.Device{},
	}
	hdr := -1
	var cols []string
	for i, l := range lines {
		if strings.Contains(l, "DevID") && strings.Contains(l, "PCI Addr") {
			hdr, cols = i, pu.Cells(l)
			break
		}
	}
	if hdr < 0 {
		return nil, pu.Unrecognised("xpu-smi: no DEVICES header (DevID | PCI Addr | …)")
	}
	col := func(name string) int {
		for i, c := range cols {
			if strings.EqualFold(c, name) {
				return i
			}
		}
		return -1
	}
	get := func(cells []string, name string) string {
		if c := col(name); c >= 0 && c < len(cells) {
			return cells[c]
		}
		return ""
	}
	for _, l := range lines[hdr+1:] {
		if pu.IsRule(l) {
			if len(snap.Devices) > 0 {
				break
			}
			continue
		}
		if !strings.HasPrefix(strings.TrimSpace(l), "|") {
			break
		}
		cells := pu.Cells(l)
		idx := pu.Int(get(cells, "DevID"))
		if idx == nil {
			snap.Warnings = append(snap.Warnings, fmt.Sprintf("xpu-smi row %q skipped", l))
			continue
		}
		d := inventory.Device{
			Index: *idx, Model: get(cells, "Model"), BusID: pu.BusID(get(cells, "PCI Addr")),
			Serial: pu.Str(get(cells, "SN")), UtilizationPercent: pu.Float(get(cells, "UseRate")),
			Partitions: []inventory.Partition{},
		}
		if used, total, ok := pu.SplitPair(get(cells, "Memory")); ok {
			unit := "MB"
			if f := strings.Fields(total); len(f) == 2 {
				total, unit = f[0], f[1]
			}
			d.MemoryUsedMiB, d.MemoryTotalMiB = pu.MiB(used, unit), pu.MiB(total, unit)
		}
		snap.Devices = append(snap.Devices, d)
	}
	if len(snap.Devices) == 0 {
		return snap, fmt.Errorf("xpu-smi: %w", pu.ErrNoDevices)
	}
	return snap, nil
}
