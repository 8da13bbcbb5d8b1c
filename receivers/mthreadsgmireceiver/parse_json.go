package mthreadsgmireceiver

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/heteroflow/heteroflow/receivers/inventory"
	pu "github.com/heteroflow/heteroflow/receivers/smi/parseutil"
)

// ParseJSON parses `mthreads-gmi --query --json`: top-level "Driver
// Version", "Attached GPUs" and a "GPU" array of objects with nested
// sections. Keys are matched after trimming, because the tool prints
// "Power Draw " with a trailing space.
func ParseJSON(data []byte) (*inventory.Snapshot, error) {
	if err := pu.CheckSize(data); err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("mthreads-gmi --json: %w", err)
	}
	gpus, ok := lookup(doc, "GPU").([]any)
	if !ok {
		return nil, pu.Unrecognised("mthreads-gmi --json: no \"GPU\" array")
	}
	snap := &inventory.Snapshot{Vendor: inventory.VendorMThreads, DriverVersion: pu.Str(str(lookup(doc, "Driver Version"))), Devices: []inventory.Device{}}
	for i, g := range gpus {
		m, ok := g.(map[string]any)
		if !ok {
			snap.Warnings = append(snap.Warnings, fmt.Sprintf("GPU[%d] is not an object", i))
			continue
		}
		d := inventory.Device{Index: i, Partitions: []inventory.Partition{}}
		if idx := pu.Int(str(lookup(m, "Index"))); idx != nil {
			d.Index = *idx
		}
		d.Model = strings.TrimSpace(str(lookup(m, "Product Name")))
		d.UUID = pu.Str(str(lookup(m, "GPU UUID")))
		d.Serial = pu.Str(str(lookup(m, "Serial Number")))
		d.FirmwareVersion = pu.Str(str(lookup(m, "MTBios Version")))
		d.BusID = pu.BusID(str(lookup(m, "PCI", "Bus ID")))
		d.MemoryTotalMiB = pu.MiB(str(lookup(m, "FB Memory Usage", "Total")), "MiB")
		d.MemoryUsedMiB = pu.MiB(str(lookup(m, "FB Memory Usage", "Used")), "MiB")
		d.UtilizationPercent = pu.Float(str(lookup(m, "Utilization", "Gpu")))
		d.TemperatureCelsius = pu.Float(str(lookup(m, "Temperature", "GPU Current Temp")))
		d.PowerWatts = pu.Float(str(lookup(m, "Power Readings", "Power Draw")))
		d.PowerLimitWatts = pu.Float(str(lookup(m, "Power Readings", "Current Power Limit")))
		snap.Devices = append(snap.Devices, d)
	}
	if len(snap.Devices) == 0 {
		return snap, fmt.Errorf("mthreads-gmi --json: %w", pu.ErrNoDevices)
	}
	return snap, nil
}

// lookup walks nested objects by key, comparing trimmed keys
// case-insensitively.
func lookup(v any, path ...string) any {
	for _, want := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		var next any
		for k, x := range m {
			if strings.EqualFold(strings.TrimSpace(k), want) {
				next = x
				break
			}
		}
		if next == nil {
			return nil
		}
		v = next
	}
	return v
}

func str(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return fmt.Sprint(x)
	}
	return ""
}
