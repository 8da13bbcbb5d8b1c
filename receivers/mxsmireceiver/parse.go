package mxsmireceiver

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/heteroflow/heteroflow/receivers/inventory"
	pu "github.com/heteroflow/heteroflow/receivers/smi/parseutil"
)

// FormTable is the default `mx-smi` table.
const FormTable = "table"

// Forms lists the forms.
var Forms = []string{FormTable}

var (
	reBanner = regexp.MustCompile(`(?:mx-smi\s+version:|MX-SMI)\s*(\S+)`)
	rePwr    = regexp.MustCompile(`(\d+(?:\.\d+)?W|NA|N/A)\s*/\s*(\d+(?:\.\d+)?W|NA|N/A)`)
)

// Detect names the form of data, or "".
func Detect(data []byte) string {
	if reBanner.Match(data) {
		return FormTable
	}
	return ""
}

// ParseForm parses data as the named form.
func ParseForm(form string, data []byte) (*inventory.Snapshot, error) {
	if form != FormTable {
		return nil, fmt.Errorf("mx-smi: unknown form %q (known: %s)", form, strings.Join(Forms, ", "))
	}
	return ParseTable(data)
}

// Parse parses the default table.
func Parse(data []byte) (*inventory.Snapshot, error) { return ParseTable(data) }

// ParseTable parses the mx-smi table: per device "GPU NAME | Bus-id |
// GPU-Util" then "Temp Power | used/total MiB | …". 2.1.6 prints one
// "Power" value, later versions "Pwr:Usage/Cap" ("97W / NA"), and 2.2.8
// adds Persistence-M / sGPU-M / Perf / GPU-State; values are therefore
// picked by shape (…C, …W, …%) rather than by position.
func ParseTable(data []byte) (*inventory.Snapshot, error) {
	if err := pu.CheckSize(data); err != nil {
		return nil, err
	}
	lines := pu.Lines(data)
	snap := &inventory.Snapshot{
		Vendor:         inventory.VendorMetaX,
		DriverVersion:  pu.HeaderValue(lines, "Kernel Mode Driver Version:"),
		RuntimeVersion: pu.HeaderValue(lines, "MACA Version:"),
		Devices:        []inventory.Device{},
	}
	for _, l := range lines {
		if m := reBanner.FindStringSubmatch(l); m != nil {
			snap.ToolVersion = pu.Str(m[1])
			break
		}
	}
	if snap.ToolVersion == nil {
		return nil, pu.Unrecognised("mx-smi: no \"mx-smi version:\" / \"MX-SMI\" banner")
	}
	for _, b := range pu.DeviceBlocks(lines, "Bus-id") {
		f := pu.Fields(b.Cell(0, 0))
		if len(b) < 2 || len(f) < 2 || pu.Int(f[0]) == nil {
			continue
		}
		name := f[1:]
		for len(name) > 1 && (name[len(name)-1] == "On" || name[len(name)-1] == "Off") {
			name = name[:len(name)-1] // Persistence-M
		}
		d := inventory.Device{Index: *pu.Int(f[0]), Model: strings.Join(name, " "), Partitions: []inventory.Partition{}}
		if bus := pu.Fields(b.Cell(0, 1)); len(bus) > 0 {
			d.BusID = pu.BusID(bus[0])
		}
		d.UtilizationPercent = pu.Float(pu.FirstWithSuffix(pu.Fields(b.Cell(0, 2)), "%"))
		r1 := b.Cell(1, 0)
		d.TemperatureCelsius = pu.Float(pu.FirstWithSuffix(pu.Fields(r1), "C"))
		if m := rePwr.FindStringSubmatch(r1); m != nil {
			d.PowerWatts, d.PowerLimitWatts = pu.Float(m[1]), pu.Float(m[2])
		} else {
			d.PowerWatts = pu.Float(pu.FirstWithSuffix(pu.Fields(r1), "W"))
		}
		mem := strings.TrimSpace(b.Cell(1, 1))
		unit := "MiB"
		if f := strings.Fields(mem); len(f) == 2 {
			mem, unit = f[0], f[1]
		}
		if used, total, ok := pu.SplitPair(mem); ok {
			d.MemoryUsedMiB, d.MemoryTotalMiB = pu.MiB(used, unit), pu.MiB(total, unit)
		}
		snap.Devices = append(snap.Devices, d)
	}
	if len(snap.Devices) == 0 {
		return snap, fmt.Errorf("mx-smi: %w", pu.ErrNoDevices)
	}
	return snap, nil
}
