package nvidiasmireceiver

import (
	"fmt"
	"strings"

	"github.com/heteroflow/heteroflow/receivers/inventory"
	pu "github.com/heteroflow/heteroflow/receivers/smi/parseutil"
)

// QueryFields is the --query-gpu field list the collector asks for. ixsmi
// accepts the same syntax, so ixsmireceiver reuses it.
var QueryFields = []string{
	"index", "uuid", "name", "serial", "pci.bus_id", "driver_version", "vbios_version",
	"memory.total", "memory.used", "utilization.gpu", "temperature.gpu",
	"power.draw", "power.limit", "mig.mode.current",
}

// QueryArgs are the arguments for the CSV form with a header, so the parser
// never depends on the field order.
func QueryArgs() []string {
	return []string{"--query-gpu=" + strings.Join(QueryFields, ","), "--format=csv,nounits"}
}

// ParseCSV parses `--query-gpu=… --format=csv[,nounits]` output with its
// header row. Header cells may carry units in brackets ("memory.used [MiB]");
// values may carry units ("103 MiB") when nounits was not given. Missing
// values are "[N/A]" or "[Not Supported]".
func ParseCSV(data []byte) (*inventory.Snapshot, error) {
	return ParseCSVVendor(data, inventory.VendorNVIDIA)
}

// ParseCSVVendor is ParseCSV for tools that copy nvidia-smi's query syntax
// (Iluvatar ixsmi), labelling the snapshot with their vendor.
func ParseCSVVendor(data []byte, vendor string) (*inventory.Snapshot, error) {
	if err := pu.CheckSize(data); err != nil {
		return nil, err
	}
	var rows [][]string
	for _, l := range pu.Lines(data) {
		if strings.TrimSpace(l) == "" {
			continue
		}
		rows = append(rows, splitCSV(l))
	}
	if len(rows) == 0 {
		return nil, pu.Unrecognised("--query-gpu csv: empty")
	}
	header := make([]string, len(rows[0]))
	known := 0
	for i, h := range rows[0] {
		name, _, _ := strings.Cut(h, " [")
		header[i] = strings.ToLower(strings.TrimSpace(name))
		if _, ok := csvFields[header[i]]; ok {
			known++
		}
	}
	if known == 0 {
		return nil, pu.Unrecognised("--query-gpu csv: header row names no known field (use --format=csv with a header)")
	}
	snap := &inventory.Snapshot{Vendor: vendor, Devices: []inventory.Device{}}
	for r, row := range rows[1:] {
		if len(row) != len(header) {
			snap.Warnings = append(snap.Warnings, fmt.Sprintf("csv row %d: %d fields, header has %d", r+1, len(row), len(header)))
			continue
		}
		d := inventory.Device{Index: r, Partitions: []inventory.Partition{}}
		var free, reserved *int64
		for i, v := range row {
			switch header[i] {
			case "memory.free":
				free = pu.MiB(v, "MiB")
			case "memory.reserved":
				reserved = pu.MiB(v, "MiB")
			}
			if f, ok := csvFields[header[i]]; ok {
				f(&d, snap, v)
			}
		}
		if d.MemoryTotalMiB == nil && d.MemoryUsedMiB != nil && free != nil && reserved != nil {
			// nvidia-smi's total is reserved + used + free (driver ≥ 510).
			d.MemoryTotalMiB = pu.Ptr(*reserved + *d.MemoryUsedMiB + *free)
		}
		snap.Devices = append(snap.Devices, d)
	}
	if len(snap.Devices) == 0 {
		return snap, fmt.Errorf("--query-gpu csv: %w", pu.ErrNoDevices)
	}
	return snap, nil
}

// csvFields maps a query field (and its alias) to where it lands.
var csvFields = map[string]func(d *inventory.Device, s *inventory.Snapshot, v string){
	"index": func(d *inventory.Device, _ *inventory.Snapshot, v string) {
		if n := pu.Int(v); n != nil {
			d.Index = *n
		}
	},
	"uuid":            func(d *inventory.Device, _ *inventory.Snapshot, v string) { d.UUID = pu.Str(v) },
	"gpu_uuid":        func(d *inventory.Device, _ *inventory.Snapshot, v string) { d.UUID = pu.Str(v) },
	"name":            func(d *inventory.Device, _ *inventory.Snapshot, v string) { d.Model = strings.TrimSpace(v) },
	"gpu_name":        func(d *inventory.Device, _ *inventory.Snapshot, v string) { d.Model = strings.TrimSpace(v) },
	"serial":          func(d *inventory.Device, _ *inventory.Snapshot, v string) { d.Serial = pu.Str(v) },
	"gpu_serial":      func(d *inventory.Device, _ *inventory.Snapshot, v string) { d.Serial = pu.Str(v) },
	"pci.bus_id":      func(d *inventory.Device, _ *inventory.Snapshot, v string) { d.BusID = pu.BusID(v) },
	"gpu_bus_id":      func(d *inventory.Device, _ *inventory.Snapshot, v string) { d.BusID = pu.BusID(v) },
	"vbios_version":   func(d *inventory.Device, _ *inventory.Snapshot, v string) { d.FirmwareVersion = pu.Str(v) },
	"memory.total":    func(d *inventory.Device, _ *inventory.Snapshot, v string) { d.MemoryTotalMiB = pu.MiB(v, "MiB") },
	"memory.used":     func(d *inventory.Device, _ *inventory.Snapshot, v string) { d.MemoryUsedMiB = pu.MiB(v, "MiB") },
	"utilization.gpu": func(d *inventory.Device, _ *inventory.Snapshot, v string) { d.UtilizationPercent = pu.Float(v) },
	"temperature.gpu": func(d *inventory.Device, _ *inventory.Snapshot, v string) { d.TemperatureCelsius = pu.Float(v) },
	"power.draw":      func(d *inventory.Device, _ *inventory.Snapshot, v string) { d.PowerWatts = pu.Float(v) },
	"power.limit":     func(d *inventory.Device, _ *inventory.Snapshot, v string) { d.PowerLimitWatts = pu.Float(v) },
	"driver_version": func(_ *inventory.Device, s *inventory.Snapshot, v string) {
		if s.DriverVersion == nil {
			s.DriverVersion = pu.Str(v)
		}
	},
	"mig.mode.current": func(*inventory.Device, *inventory.Snapshot, string) {},
}

// splitCSV splits one nvidia-smi CSV line. nvidia-smi separates fields with
// ", " and never quotes, but product names contain no commas, so a plain
// split is exact; quotes are stripped in case a wrapper added them.
func splitCSV(line string) []string {
	parts := strings.Split(line, ",")
	for i := range parts {
		parts[i] = strings.Trim(strings.TrimSpace(parts[i]), `"`)
	}
	return parts
}
