package nvidiasmireceiver

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/heteroflow/heteroflow/receivers/inventory"
	pu "github.com/heteroflow/heteroflow/receivers/smi/parseutil"
)

var (
	// GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-7fdaf0a5-…)
	reListGPU = regexp.MustCompile(`^GPU (\d+): (.+?) \(UUID: ([^)]+)\)\s*$`)
	//   MIG 1g.10gb     Device  0: (UUID: MIG-feb88891-…)
	// and pre-R470: MIG 1g.5gb Device 0: (UUID: MIG-GPU-<uuid>/<gi>/<ci>)
	reListMIG = regexp.MustCompile(`^\s+MIG (\S+)\s+Device\s+(\d+): \(UUID: ([^)]+)\)\s*$`)
)

// ParseList parses `nvidia-smi -L`: one line per GPU and, indented under it,
// one line per MIG device with its profile name.
func ParseList(data []byte) (*inventory.Snapshot, error) {
	if err := pu.CheckSize(data); err != nil {
		return nil, err
	}
	snap := &inventory.Snapshot{Vendor: inventory.VendorNVIDIA, Devices: []inventory.Device{}}
	for n, l := range pu.Lines(data) {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if m := reListGPU.FindStringSubmatch(l); m != nil {
			idx := pu.Int(m[1])
			if idx == nil {
				return nil, pu.Unrecognised("nvidia-smi -L line %d: bad index", n+1)
			}
			snap.Devices = append(snap.Devices, inventory.Device{
				Index: *idx, Model: m[2], UUID: pu.Str(m[3]), Partitions: []inventory.Partition{},
			})
			continue
		}
		if m := reListMIG.FindStringSubmatch(l); m != nil {
			if len(snap.Devices) == 0 {
				return nil, pu.Unrecognised("nvidia-smi -L line %d: MIG device before any GPU", n+1)
			}
			d := &snap.Devices[len(snap.Devices)-1]
			d.MIGMode = true // MIG devices are listed only under a GPU in MIG mode
			d.Partitions = append(d.Partitions, inventory.Partition{
				Kind: "mig", ID: m[2], UUID: pu.Str(m[3]), Profile: pu.Str(m[1]),
			})
			continue
		}
		return nil, pu.Unrecognised("nvidia-smi -L line %d: %q", n+1, truncate(l, 60))
	}
	if len(snap.Devices) == 0 {
		return nil, fmt.Errorf("nvidia-smi -L: %w", pu.ErrNoDevices)
	}
	return snap, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
