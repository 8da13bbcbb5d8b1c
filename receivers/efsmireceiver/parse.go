package efsmireceiver

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/heteroflow/heteroflow/receivers/inventory"
	pu "github.com/heteroflow/heteroflow/receivers/smi/parseutil"
)

// FormTable is the default `efsmi` table.
const FormTable = "table"

// Forms lists the forms.
var Forms = []string{FormTable}

var (
	// |EFSMI    V1.2.0.301       Driver Ver: 1.2.0.301 |
	reBanner = regexp.MustCompile(`EFSMI\s+V(\S+)(?:\s+Driver Ver:\s*(\S+))?`)
	// "39 C" (efsmi puts a space before the unit)
	reTemp = regexp.MustCompile(`^\s*(\d+(?:\.\d+)?)\s*C\b`)
	// "105W  300W": usage and cap
	rePwr = regexp.MustCompile(`(\d+(?:\.\d+)?)W\s+(\d+(?:\.\d+)?)W`)
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
		return nil, fmt.Errorf("efsmi: unknown form %q (known: %s)", form, strings.Join(Forms, ", "))
	}
	return ParseTable(data)
}

// Parse parses the default table.
func Parse(data []byte) (*inventory.Snapshot, error) { return ParseTable(data) }

// ParseTable parses the efsmi table:
//
//	| DEV NAME | FW VER | BUS-ID ECC |
//	| TEMP Dpm Pwr(Usage/Cap) | Mem GCU Virt | DUsed SN |
//
// Memory is the total only ("49120MiB"): used memory stays unknown. DUsed
// is the device utilisation.
func ParseTable(data []byte) (*inventory.Snapshot, error) {
	if err := pu.CheckSize(data); err != nil {
		return nil, err
	}
	lines := pu.Lines(data)
	snap := &inventory.Snapshot{Vendor: inventory.VendorEnflame, Devices: []inventory.Device{}}
	for _, l := range lines {
		if m := reBanner.FindStringSubmatch(l); m != nil {
			snap.ToolVersion, snap.DriverVersion = pu.Str(m[1]), pu.Str(m[2])
			break
		}
	}
	if snap.ToolVersion == nil {
		return nil, pu.Unrecognised("efsmi: no \"EFSMI V…\" banner")
	}
	for _, b := range pu.DeviceBlocks(lines, "DUsed") {
		f := pu.Fields(b.Cell(0, 0))
		if len(b) < 2 || len(f) < 2 || pu.Int(f[0]) == nil {
			continue
		}
		d := inventory.Device{
			Index: *pu.Int(f[0]), Model: strings.Join(f[1:], " "),
			FirmwareVersion: pu.Str(b.Cell(0, 1)), Partitions: []inventory.Partition{},
		}
		if bus := pu.Fields(b.Cell(0, 2)); len(bus) > 0 {
			d.BusID = pu.BusID(bus[0])
		}
		r1 := b.Cell(1, 0)
		if m := reTemp.FindStringSubmatch(r1); m != nil {
			d.TemperatureCelsius = pu.Float(m[1])
		}
		if m := rePwr.FindStringSubmatch(r1); m != nil {
			d.PowerWatts, d.PowerLimitWatts = pu.Float(m[1]), pu.Float(m[2])
		}
		if mem := pu.Fields(b.Cell(1, 1)); len(mem) > 0 {
			d.MemoryTotalMiB = pu.MiB(mem[0], "MiB")
		}
		if u := pu.Fields(b.Cell(1, 2)); len(u) > 0 {
			d.UtilizationPercent = pu.Float(u[0])
			if len(u) > 1 {
				d.Serial = pu.Str(u[len(u)-1])
			}
		}
		snap.Devices = append(snap.Devices, d)
	}
	if len(snap.Devices) == 0 {
		return snap, fmt.Errorf("efsmi: %w", pu.ErrNoDevices)
	}
	return snap, nil
}
