package nvidiasmireceiver

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/heteroflow/heteroflow/receivers/inventory"
	pu "github.com/heteroflow/heteroflow/receivers/smi/parseutil"
)

// rePowerPair matches "93W / 350W", "N/A / N/A", "24W /  300W".
var rePowerPair = regexp.MustCompile(`(\d+(?:\.\d+)?W|N/A)\s*/\s*(\d+(?:\.\d+)?W|N/A)`)

// ParseTable parses the default `nvidia-smi` table (no flags).
func ParseTable(data []byte) (*inventory.Snapshot, error) {
	return ParseTableVendor(data, inventory.VendorNVIDIA, "NVIDIA-SMI")
}

// ParseTableVendor parses an nvidia-smi-style default table: per device a
// block whose first row is "index Name [Persistence] | Bus-Id [Disp] | …"
// and whose second row is "Fan Temp Perf Pwr:Usage/Cap | used / total |
// GPU-Util …". Iluvatar's ixsmi prints this layout, so ixsmireceiver reuses
// it; banner names the tool's first header word ("IX-ML", "NVIDIA-SMI").
func ParseTableVendor(data []byte, vendor, banner string) (*inventory.Snapshot, error) {
	if err := pu.CheckSize(data); err != nil {
		return nil, err
	}
	lines := pu.Lines(data)
	if !containsLine(lines, banner) {
		return nil, pu.Unrecognised("no %q banner", banner)
	}
	snap := &inventory.Snapshot{
		Vendor:         vendor,
		DriverVersion:  pu.HeaderValue(lines, "Driver Version:"),
		ToolVersion:    pu.HeaderValue(lines, banner+":"),
		RuntimeVersion: pu.HeaderValue(lines, "CUDA Version:"),
		Devices:        []inventory.Device{},
	}
	if snap.ToolVersion == nil {
		snap.ToolVersion = pu.HeaderValue(lines, banner)
	}
	for _, b := range pu.DeviceBlocks(lines, "Bus-Id") {
		if len(b) < 2 {
			snap.Warnings = append(snap.Warnings, fmt.Sprintf("device block with %d rows skipped", len(b)))
			continue
		}
		f := pu.Fields(b.Cell(0, 0))
		if len(f) < 2 || pu.Int(f[0]) == nil {
			snap.Warnings = append(snap.Warnings, fmt.Sprintf("device row %q skipped", b.Cell(0, 0)))
			continue
		}
		name := f[1:]
		if last := name[len(name)-1]; len(name) > 1 && (last == "On" || last == "Off") {
			name = name[:len(name)-1] // Persistence-M
		}
		d := inventory.Device{
			Index:      *pu.Int(f[0]),
			Model:      strings.Join(name, " "),
			Partitions: []inventory.Partition{},
		}
		if bus := pu.Fields(b.Cell(0, 1)); len(bus) > 0 {
			d.BusID = pu.BusID(bus[0])
		}
		r1 := b.Cell(1, 0)
		d.TemperatureCelsius = pu.Float(pu.FirstWithSuffix(pu.Fields(r1), "C"))
		if m := rePowerPair.FindStringSubmatch(r1); m != nil {
			d.PowerWatts, d.PowerLimitWatts = pu.Float(m[1]), pu.Float(m[2])
		}
		if used, total, ok := pu.SplitPair(b.Cell(1, 1)); ok {
			d.MemoryUsedMiB, d.MemoryTotalMiB = pu.MiB(used, "MiB"), pu.MiB(total, "MiB")
		}
		d.UtilizationPercent = pu.Float(pu.FirstWithSuffix(pu.Fields(b.Cell(1, 2)), "%"))
		snap.Devices = append(snap.Devices, d)
	}
	if len(snap.Devices) == 0 {
		return snap, fmt.Errorf("%s table: %w", banner, pu.ErrNoDevices)
	}
	return snap, nil
}

func containsLine(lines []string, s string) bool {
	for _, l := range lines {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}
