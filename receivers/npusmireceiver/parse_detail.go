package npusmireceiver

import (
	"fmt"
	"strings"

	"github.com/heteroflow/heteroflow/receivers/inventory"
	pu "github.com/heteroflow/heteroflow/receivers/smi/parseutil"
)

// kvBlocks splits "Key : Value" output into blank-line separated blocks.
func kvBlocks(data []byte) []map[string]string {
	var out []map[string]string
	cur := map[string]string{}
	for _, l := range pu.Lines(data) {
		if strings.TrimSpace(l) == "" {
			if len(cur) > 0 {
				out = append(out, cur)
				cur = map[string]string{}
			}
			continue
		}
		if k, v, ok := pu.KeyValue(l); ok {
			cur[k] = v
		}
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// ParseBoard parses `npu-smi info -t board -i <npu> -c <chip>`: one chip's
// identity. npu-smi prints no UUID; the die id (VDie ID on 910B, Die ID on
// 310P) is the stable hardware identity, so it becomes the UUID with its
// blank-separated words joined by '-'.
func ParseBoard(data []byte) (*inventory.Snapshot, error) {
	if err := pu.CheckSize(data); err != nil {
		return nil, err
	}
	blocks := kvBlocks(data)
	if len(blocks) == 0 || blocks[0]["NPU ID"] == "" || (blocks[0]["PCIe Bus Info"] == "" && blocks[0]["Board ID"] == "") {
		return nil, pu.Unrecognised("npu-smi info -t board: no NPU ID / PCIe Bus Info")
	}
	b := blocks[0]
	d := inventory.Device{
		Card: pu.Int(b["NPU ID"]), Chip: pu.Int(b["Chip ID"]),
		BusID: pu.BusID(b["PCIe Bus Info"]), FirmwareVersion: pu.Str(b["Firmware Version"]),
		Partitions: []inventory.Partition{},
	}
	if name := b["Chip Name"]; !pu.IsUnknown(name) && !strings.EqualFold(name, "xxx") {
		d.Model = name
	}
	for _, k := range []string{"VDie ID", "Die ID"} {
		if v := strings.Fields(b[k]); len(v) > 0 {
			d.UUID = pu.Ptr(strings.Join(v, "-"))
			break
		}
	}
	if d.Chip != nil {
		d.Index = *d.Chip
	}
	return &inventory.Snapshot{Vendor: inventory.VendorAscend, Devices: []inventory.Device{d}}, nil
}

// ParseCommon parses `npu-smi info -t common -i <npu>`: a header block (NPU
// ID, Chip Count), one block per chip ("Chip ID" first) and an MCU block
// ("Chip Name : mcu"), which is skipped.
func ParseCommon(data []byte) (*inventory.Snapshot, error) {
	return parseChipBlocks(data, "common", "Aicore Usage Rate(%)", func(d *inventory.Device, b map[string]string) {
		d.TemperatureCelsius = pu.Float(b["Temperature(C)"])
		d.PowerWatts = pu.Float(b["NPU Real-time Power(W)"])
	})
}

// ParseUsages parses `npu-smi info -t usages -i <npu>`, where each chip's
// "Chip ID" line comes after its fields. Memory is the HBM capacity when
// the chip has HBM, else DDR; used memory is derived from the usage rate,
// so it is exact only to 1%.
func ParseUsages(data []byte) (*inventory.Snapshot, error) {
	return parseChipBlocks(data, "usages", "DDR Capacity(MB)", func(d *inventory.Device, b map[string]string) {
		capKey, rateKey := "DDR Capacity(MB)", "DDR Usage Rate(%)"
		if b["HBM Capacity(MB)"] != "" {
			capKey, rateKey = "HBM Capacity(MB)", "HBM Usage Rate(%)"
		}
		d.MemoryTotalMiB = pu.MiB(b[capKey], "MB")
		if rate := pu.Float(b[rateKey]); rate != nil && d.MemoryTotalMiB != nil {
			d.MemoryUsedMiB = pu.Ptr(int64(float64(*d.MemoryTotalMiB)**rate/100 + 0.5))
		}
	})
}

func parseChipBlocks(data []byte, form, marker string, fill func(*inventory.Device, map[string]string)) (*inventory.Snapshot, error) {
	if err := pu.CheckSize(data); err != nil {
		return nil, err
	}
	blocks := kvBlocks(data)
	if len(blocks) == 0 || blocks[0]["NPU ID"] == "" {
		return nil, pu.Unrecognised("npu-smi info -t %s: no NPU ID line", form)
	}
	npu := pu.Int(blocks[0]["NPU ID"])
	if npu == nil {
		return nil, pu.Unrecognised("npu-smi info -t %s: NPU ID %q", form, blocks[0]["NPU ID"])
	}
	snap := &inventory.Snapshot{Vendor: inventory.VendorAscend, Devices: []inventory.Device{}}
	sawMarker := false
	for _, b := range blocks {
		if _, ok := b[marker]; ok {
			sawMarker = true
		}
		chip := pu.Int(b["Chip ID"])
		if chip == nil || strings.EqualFold(b["Chip Name"], "mcu") {
			continue
		}
		d := inventory.Device{Index: *chip, Card: pu.Ptr(*npu), Chip: chip, Partitions: []inventory.Partition{}}
		d.UtilizationPercent = pu.Float(b["Aicore Usage Rate(%)"])
		fill(&d, b)
		snap.Devices = append(snap.Devices, d)
	}
	if !sawMarker {
		return nil, pu.Unrecognised("npu-smi info -t %s: no %q field", form, marker)
	}
	if want := pu.Int(blocks[0]["Chip Count"]); want != nil && *want != len(snap.Devices) {
		snap.Warnings = append(snap.Warnings, fmt.Sprintf("NPU %d: Chip Count %d but %d chip blocks", *npu, *want, len(snap.Devices)))
	}
	if len(snap.Devices) == 0 {
		return snap, fmt.Errorf("npu-smi info -t %s: %w", form, pu.ErrNoDevices)
	}
	return snap, nil
}
