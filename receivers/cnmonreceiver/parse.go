package cnmonreceiver

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/heteroflow/heteroflow/receivers/inventory"
	pu "github.com/heteroflow/heteroflow/receivers/smi/parseutil"
)

// FormTable is the only form: the default `cnmon` table.
const FormTable = "table"

// Forms lists the forms.
var Forms = []string{FormTable}

var (
	// | CNMON v5.10.13                    Driver v5.10.13 |
	reBanner = regexp.MustCompile(`CNMON\s+v(\S+)(?:\s+Driver\s+v(\S+))?`)
	rePower  = regexp.MustCompile(`(\d+(?:\.\d+)?)\s*W\s*/\s*(\d+(?:\.\d+)?)\s*W`)
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
		return nil, fmt.Errorf("cnmon: unknown form %q (known: %s)", form, strings.Join(Forms, ", "))
	}
	return ParseTable(data)
}

// Parse detects the form and parses it.
func Parse(data []byte) (*inventory.Snapshot, error) { return ParseTable(data) }

// ParseTable parses the cnmon table in both layouts:
//
//	5.x: Card VF Name Firmware | Bus-Id       | Util Ecc-Error
//	     Fan Temp Pwr:Usage/Cap | Memory-Usage | SR-IOV Compute-Mode
//	4.x: Card VF Name Firmware | Inited Driver | Util Ecc-Error
//	     Fan Temp Pwr:Usage/Cap | Memory-Usage | vMemory-Usage
//
// VF is "/" for a physical card; a number means the row is an SR-IOV VF
// (vMLU), which becomes a partition of its card. A card listed only through
// its VFs gets the VFs' memory summed.
func ParseTable(data []byte) (*inventory.Snapshot, error) {
	if err := pu.CheckSize(data); err != nil {
		return nil, err
	}
	lines := pu.Lines(data)
	snap := &inventory.Snapshot{Vendor: inventory.VendorCambricon, Devices: []inventory.Device{}}
	found := false
	for _, l := range lines {
		if m := reBanner.FindStringSubmatch(l); m != nil {
			snap.ToolVersion = pu.Str(m[1])
			if m[2] != "" {
				snap.DriverVersion = pu.Str(m[2])
			}
			found = true
			break
		}
	}
	if !found {
		return nil, pu.Unrecognised("cnmon: no \"CNMON v…\" banner")
	}
	v4 := false
	for _, l := range lines {
		if strings.Contains(l, "Inited") {
			v4 = true
		}
	}
	byCard := map[int]int{}
	pfSeen := map[int]bool{}
	for _, b := range pu.DeviceBlocks(lines, "Memory-Usage") {
		if len(b) < 2 || len(b[0]) < 3 || len(b[1]) < 2 {
			continue
		}
		f := pu.Fields(b.Cell(0, 0))
		if len(f) < 3 || pu.Int(f[0]) == nil {
			snap.Warnings = append(snap.Warnings, fmt.Sprintf("cnmon row %q skipped", b.Cell(0, 0)))
			continue
		}
		card, vf := *pu.Int(f[0]), f[1]
		name := f[2]
		fw := ""
		if len(f) > 3 {
			name, fw = strings.Join(f[2:len(f)-1], " "), f[len(f)-1]
		}
		r1 := b.Cell(1, 0)
		d := inventory.Device{
			Index: card, Model: name, FirmwareVersion: pu.Str(fw), Partitions: []inventory.Partition{},
			TemperatureCelsius: pu.Float(pu.FirstWithSuffix(pu.Fields(r1), "C")),
			UtilizationPercent: pu.Float(pu.FirstWithSuffix(pu.Fields(b.Cell(0, 2)), "%")),
		}
		if m := rePower.FindStringSubmatch(r1); m != nil {
			d.PowerWatts, d.PowerLimitWatts = pu.Float(m[1]), pu.Float(m[2])
		}
		if ecc := pu.Fields(b.Cell(0, 2)); len(ecc) > 1 {
			d.ECCErrors = pu.Int64(ecc[len(ecc)-1])
		}
		if v4 {
			if drv := pu.Fields(b.Cell(0, 1)); len(drv) > 1 && snap.DriverVersion == nil {
				snap.DriverVersion = pu.Str(strings.TrimPrefix(drv[len(drv)-1], "v"))
			}
		} else {
			d.BusID = pu.BusID(b.Cell(0, 1))
		}
		if used, total, ok := pu.SplitPair(b.Cell(1, 1)); ok {
			d.MemoryUsedMiB, d.MemoryTotalMiB = pu.MiB(used, "MiB"), pu.MiB(total, "MiB")
		}
		if vf == "/" {
			pfSeen[card] = true
			if pos, ok := byCard[card]; ok { // VF rows came first
				d.Partitions = snap.Devices[pos].Partitions
				snap.Devices[pos] = d
			} else {
				byCard[card] = len(snap.Devices)
				snap.Devices = append(snap.Devices, d)
			}
			continue
		}
		p := inventory.Partition{Kind: "vf", ID: vf, MemoryTotalMiB: d.MemoryTotalMiB, MemoryUsedMiB: d.MemoryUsedMiB}
		pos, ok := byCard[card]
		if !ok {
			pos = len(snap.Devices)
			byCard[card] = pos
			base := d
			base.MemoryTotalMiB, base.MemoryUsedMiB = nil, nil
			snap.Devices = append(snap.Devices, base)
		}
		dev := &snap.Devices[pos]
		dev.Partitions = append(dev.Partitions, p)
		if !pfSeen[card] {
			dev.MemoryTotalMiB, dev.MemoryUsedMiB = sumVF(dev.Partitions)
		}
	}
	if len(snap.Devices) == 0 {
		return snap, fmt.Errorf("cnmon: %w", pu.ErrNoDevices)
	}
	return snap, nil
}

func sumVF(ps []inventory.Partition) (*int64, *int64) {
	var total, used int64
	for _, p := range ps {
		if p.MemoryTotalMiB == nil || p.MemoryUsedMiB == nil {
			return nil, nil
		}
		total += *p.MemoryTotalMiB
		used += *p.MemoryUsedMiB
	}
	return &total, &used
}
