package npusmireceiver

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/heteroflow/heteroflow/receivers/inventory"
	pu "github.com/heteroflow/heteroflow/receivers/smi/parseutil"
)

// | npu-smi 22.0.3.1                  Version: 22.0.3.1 |
var reInfoVersion = regexp.MustCompile(`npu-smi\s+(\S+)\s+Version:\s*(\S+)`)

// rePair matches "used / total" with the uneven spacing npu-smi prints.
var rePair = regexp.MustCompile(`(\d+)\s*/\s*(\d+)`)

// ParseInfo parses `npu-smi info` in every layout seen (1.9.x without the
// Hugepages column, 20.x–24.x, 310 cards whose rows read "Chip Device").
//
// Each block between rules starts with an NPU row ("NPU Name | Health |
// Power Temp [Hugepages]") followed by one or more chip rows ("Chip
// [Device] | Bus-Id | AICore Memory [HBM]"). A row is a chip row when its
// second cell is a PCI address. Every chip becomes a device; Index is the
// Device column when shown, otherwise the listing order, and ApplyChipMap
// replaces it with the Chip Logic ID from `npu-smi info -m`.
func ParseInfo(data []byte) (*inventory.Snapshot, error) {
	if err := pu.CheckSize(data); err != nil {
		return nil, err
	}
	lines := pu.Lines(data)
	snap := &inventory.Snapshot{Vendor: inventory.VendorAscend, Devices: []inventory.Device{}}
	found := false
	for _, l := range lines {
		if m := reInfoVersion.FindStringSubmatch(l); m != nil {
			snap.ToolVersion, snap.DriverVersion = pu.Str(m[1]), pu.Str(m[2])
			found = true
			break
		}
	}
	if !found {
		return nil, pu.Unrecognised("npu-smi info: no \"npu-smi <ver> Version: <ver>\" header")
	}
	for _, b := range pu.DeviceBlocks(lines, "Bus-Id") {
		var npu *npuRow
		for _, row := range b {
			if len(row) < 3 {
				continue
			}
			if pu.BusID(row[1]) == nil {
				npu = parseNPURow(row, snap)
				continue
			}
			if npu == nil {
				snap.Warnings = append(snap.Warnings, fmt.Sprintf("chip row %q before any NPU row", row[0]))
				continue
			}
			snap.Devices = append(snap.Devices, chipDevice(len(snap.Devices), npu, row))
		}
	}
	if len(snap.Devices) == 0 {
		return snap, fmt.Errorf("npu-smi info: %w", pu.ErrNoDevices)
	}
	return snap, nil
}

type npuRow struct {
	id     *int
	name   string
	health *string
	power  *float64
	temp   *float64
}

func parseNPURow(row []string, snap *inventory.Snapshot) *npuRow {
	f := pu.Fields(row[0])
	r := &npuRow{health: health(row[1])}
	if len(f) > 0 {
		r.id = pu.Int(f[0])
		r.name = strings.Join(f[1:], " ")
	}
	if r.id == nil {
		snap.Warnings = append(snap.Warnings, fmt.Sprintf("NPU row %q: no NPU ID", row[0]))
	}
	if v := pu.Fields(row[2]); len(v) >= 2 {
		r.power, r.temp = pu.Float(v[0]), pu.Float(v[1])
	}
	return r
}

func chipDevice(pos int, npu *npuRow, row []string) inventory.Device {
	f := pu.Fields(row[0])
	d := inventory.Device{
		Index:              pos,
		Model:              npu.name,
		Card:               npu.id,
		Health:             npu.health,
		PowerWatts:         npu.power,
		TemperatureCelsius: npu.temp,
		BusID:              pu.BusID(row[1]),
		Partitions:         []inventory.Partition{},
	}
	if len(f) > 0 {
		d.Chip = pu.Int(f[0])
	}
	if len(f) > 1 {
		if dev := pu.Int(f[1]); dev != nil {
			d.Index = *dev // 310 layouts print the logical device id
		}
	}
	cell := row[2]
	v := pu.Fields(cell)
	if len(v) > 0 {
		d.UtilizationPercent = pu.Float(v[0])
	}
	// Memory-Usage, then HBM-Usage. On HBM parts the DDR pair is "0 / 0"
	// (910B) or the small control-CPU DDR (910A): HBM is the device memory.
	pairs := rePair.FindAllStringSubmatch(cell, -1)
	if len(pairs) > 0 {
		p := pairs[len(pairs)-1]
		if len(pairs) > 1 && p[2] == "0" {
			p = pairs[0]
		}
		d.MemoryUsedMiB, d.MemoryTotalMiB = pu.MiB(p[1], "MB"), pu.MiB(p[2], "MB")
	}
	return d
}

// health maps npu-smi's words: OK; Warning (minor alarm); Alarm, Critical
// and Urgent (major). Other words are kept lower-cased.
func health(s string) *string {
	w := strings.ToLower(strings.TrimSpace(s))
	switch w {
	case "":
		return nil
	case "ok":
		return pu.Ptr("ok")
	case "warning":
		return pu.Ptr("warning")
	case "alarm", "critical", "urgent":
		return pu.Ptr("critical")
	}
	return pu.Str(w)
}
