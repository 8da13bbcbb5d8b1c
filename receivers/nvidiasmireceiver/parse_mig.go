package nvidiasmireceiver

import (
	"fmt"
	"regexp"
	"slices"

	"github.com/heteroflow/heteroflow/receivers/inventory"
	pu "github.com/heteroflow/heteroflow/receivers/smi/parseutil"
)

// |   0  MIG 1g.10gb         19        9          2:1     |
var reLGIRow = regexp.MustCompile(`^\|\s+(\d+)\s+MIG\s+(\S+)\s+(\d+)\s+(\d+)\s+(\d+:\d+)\s+\|$`)

// ParseMIGInstances parses `nvidia-smi mig -lgi` (GPU instances with profile
// and placement). Each listed GPU becomes a device carrying only Index and
// Partitions; merge it into a full snapshot by index.
func ParseMIGInstances(data []byte) (*inventory.Snapshot, error) {
	if err := pu.CheckSize(data); err != nil {
		return nil, err
	}
	lines := pu.Lines(data)
	found := false
	for _, l := range lines {
		if reGPUInstances.MatchString(l) {
			found = true
			break
		}
	}
	if !found {
		return nil, pu.Unrecognised("nvidia-smi mig -lgi: no \"GPU instances:\" table")
	}
	snap := &inventory.Snapshot{Vendor: inventory.VendorNVIDIA, Devices: []inventory.Device{}}
	byIndex := map[int]int{}
	for _, l := range lines {
		m := reLGIRow.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		gpu := pu.Int(m[1])
		if gpu == nil {
			continue
		}
		pos, ok := byIndex[*gpu]
		if !ok {
			pos = len(snap.Devices)
			byIndex[*gpu] = pos
			snap.Devices = append(snap.Devices, inventory.Device{Index: *gpu, Partitions: []inventory.Partition{}})
		}
		snap.Devices[pos].Partitions = append(snap.Devices[pos].Partitions, inventory.Partition{
			Kind: "mig", ID: m[4], Profile: pu.Str(m[2]), Placement: pu.Str(m[5]),
		})
	}
	if len(snap.Devices) == 0 {
		// A MIG-enabled GPU with no instances prints "No GPU instances found".
		return snap, fmt.Errorf("nvidia-smi mig -lgi: %w", pu.ErrNoDevices)
	}
	slices.SortFunc(snap.Devices, func(a, b inventory.Device) int { return a.Index - b.Index })
	return snap, nil
}

var reGPUInstances = regexp.MustCompile(`GPU instances:`)
