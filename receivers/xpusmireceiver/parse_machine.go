package xpusmireceiver

import (
	"fmt"
	"strings"

	"github.com/heteroflow/heteroflow/receivers/inventory"
	pu "github.com/heteroflow/heteroflow/receivers/smi/parseutil"
)

// Column positions of `xpu-smi -m` (P800 / Kunlun3). No verbatim sample of
// this form is public; the positions are the ones SwanLab's kunlunxin
// collector reads (swanlab/data/run/metadata/hardware/xpu/kunlunxin.py):
// [0] PCI address, [1] index, [4] temperature °C, [8] power W,
// [17] used MiB, [18] total MiB, [19] utilisation %, [21:] model name in
// parentheses. Rows with fewer columns are refused rather than guessed.
const (
	mBus, mIndex, mTemp, mPower  = 0, 1, 4, 8
	mUsed, mTotal, mUtil, mModel = 17, 18, 19, 21
	machineMinCols               = 22
)

// ParseMachine parses `xpu-smi -m` rows.
func ParseMachine(data []byte) (*inventory.Snapshot, error) {
	if err := pu.CheckSize(data); err != nil {
		return nil, err
	}
	if IsIntel(data) {
		return nil, ErrIntelXPUSMI
	}
	snap := &inventory.Snapshot{Vendor: inventory.VendorKunlunxin, Devices: []inventory.Device{}}
	for n, l := range pu.Lines(data) {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		if len(f) < machineMinCols {
			return nil, pu.Unrecognised("xpu-smi -m line %d: %d columns, want ≥ %d", n+1, len(f), machineMinCols)
		}
		idx := pu.Int(f[mIndex])
		if idx == nil {
			return nil, pu.Unrecognised("xpu-smi -m line %d: index %q", n+1, f[mIndex])
		}
		model := strings.Trim(strings.Join(f[mModel:], " "), "()")
		if i := strings.Index(model, ")"); i >= 0 {
			model = model[:i]
		}
		snap.Devices = append(snap.Devices, inventory.Device{
			Index: *idx, Model: model, BusID: pu.BusID(f[mBus]),
			TemperatureCelsius: pu.Float(f[mTemp]), PowerWatts: pu.Float(f[mPower]),
			MemoryUsedMiB: pu.MiB(f[mUsed], "MiB"), MemoryTotalMiB: pu.MiB(f[mTotal], "MiB"),
			UtilizationPercent: pu.Float(f[mUtil]), Partitions: []inventory.Partition{},
		})
	}
	if len(snap.Devices) == 0 {
		return nil, fmt.Errorf("xpu-smi -m: %w", pu.ErrNoDevices)
	}
	return snap, nil
}
