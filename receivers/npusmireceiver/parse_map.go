package npusmireceiver

import (
	"fmt"
	"strings"

	"github.com/heteroflow/heteroflow/receivers/inventory"
	pu "github.com/heteroflow/heteroflow/receivers/smi/parseutil"
)

// ChipMapEntry is one row of `npu-smi info -m`.
type ChipMapEntry struct {
	NPU, Chip int
	LogicID   *int // nil for the MCU row ("-")
	Name      string
}

// ParseChipMap parses `npu-smi info -m` (NPU ID, Chip ID, Chip Logic ID,
// Chip Name). The MCU row has logic id "-" and is kept with a nil LogicID.
func ParseChipMap(data []byte) ([]ChipMapEntry, error) {
	if err := pu.CheckSize(data); err != nil {
		return nil, err
	}
	lines := pu.Lines(data)
	start := -1
	for i, l := range lines {
		if strings.Contains(l, "Chip Logic ID") {
			start = i + 1
			break
		}
	}
	if start < 0 {
		return nil, pu.Unrecognised("npu-smi info -m: no \"Chip Logic ID\" header")
	}
	var out []ChipMapEntry
	for _, l := range lines[start:] {
		f := strings.Fields(l)
		if len(f) < 3 {
			continue
		}
		npu, chip := pu.Int(f[0]), pu.Int(f[1])
		if npu == nil || chip == nil {
			continue
		}
		out = append(out, ChipMapEntry{NPU: *npu, Chip: *chip, LogicID: pu.Int(f[2]), Name: strings.Join(f[3:], " ")})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("npu-smi info -m: %w", pu.ErrNoDevices)
	}
	return out, nil
}

// ParseMap is ParseChipMap as a snapshot: one device per AI chip (MCU rows
// dropped), Index = Chip Logic ID, Card/Chip set, Model = Chip Name.
func ParseMap(data []byte) (*inventory.Snapshot, error) {
	entries, err := ParseChipMap(data)
	if err != nil {
		return nil, err
	}
	snap := &inventory.Snapshot{Vendor: inventory.VendorAscend, Devices: []inventory.Device{}}
	for _, e := range entries {
		if e.LogicID == nil {
			continue
		}
		snap.Devices = append(snap.Devices, inventory.Device{
			Index: *e.LogicID, Card: pu.Ptr(e.NPU), Chip: pu.Ptr(e.Chip), Model: e.Name,
			Partitions: []inventory.Partition{},
		})
	}
	return snap, nil
}

// ApplyChipMap sets each device's Index to its Chip Logic ID, the number
// ASCEND_RT_VISIBLE_DEVICES takes, matching on (NPU ID, Chip ID). A device
// the map lacks keeps its index and gets a warning.
func ApplyChipMap(snap *inventory.Snapshot, entries []ChipMapEntry) {
	for i := range snap.Devices {
		d := &snap.Devices[i]
		if d.Card == nil || d.Chip == nil {
			continue
		}
		matched := false
		for _, e := range entries {
			if e.NPU == *d.Card && e.Chip == *d.Chip && e.LogicID != nil {
				d.Index = *e.LogicID
				matched = true
				break
			}
		}
		if !matched {
			snap.Warnings = append(snap.Warnings, fmt.Sprintf("NPU %d chip %d: not in npu-smi info -m, index %d kept", *d.Card, *d.Chip, d.Index))
		}
	}
}
