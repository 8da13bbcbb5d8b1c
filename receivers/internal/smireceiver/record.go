package smireceiver

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/heteroflow/heteroflow/receivers/internal/hwmetrics"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

const mib = 1 << 20

// record adds one data point per known value of every device in snap. A
// broken device reaches us as a Snapshot warning, which the caller reports.
func record(mb *hwmetrics.MetricsBuilder, snap *inventory.Snapshot, vendor string, now time.Time) {
	if snap.Vendor != "" {
		vendor = snap.Vendor
	}
	for i := range snap.Devices {
		d := &snap.Devices[i]
		a := deviceAttributes(vendor, snap.DriverVersion, d)
		if d.UtilizationPercent != nil {
			mb.RecordDouble(hwmetrics.HwGpuUtilization, now, *d.UtilizationPercent/100, &a)
		}
		if d.MemoryUsedMiB != nil {
			mb.RecordInt(hwmetrics.HwGpuMemoryUsage, now, *d.MemoryUsedMiB*mib, &a)
		}
		if d.MemoryTotalMiB != nil {
			mb.RecordInt(hwmetrics.HwGpuMemoryLimit, now, *d.MemoryTotalMiB*mib, &a)
		}
		if d.MemoryUsedMiB != nil && d.MemoryTotalMiB != nil && *d.MemoryTotalMiB > 0 {
			mb.RecordDouble(hwmetrics.HwGpuMemoryUtilization, now,
				float64(*d.MemoryUsedMiB)/float64(*d.MemoryTotalMiB), &a)
		}
		if d.TemperatureCelsius != nil {
			mb.RecordDouble(hwmetrics.HwGpuTemperature, now, *d.TemperatureCelsius, &a)
		}
		if d.PowerWatts != nil {
			mb.RecordDouble(hwmetrics.HwGpuPowerDraw, now, *d.PowerWatts, &a)
		}
		if d.PowerLimitWatts != nil {
			mb.RecordDouble(hwmetrics.HwGpuPowerLimit, now, *d.PowerLimitWatts, &a)
		}
		if d.ECCErrors != nil {
			mb.RecordInt(hwmetrics.HwErrors, now, *d.ECCErrors, &a, hwmetrics.AttrErrorType, hwmetrics.ErrorTypeECC)
		}
		if state, ok := healthState(d.Health); ok {
			for _, st := range hwmetrics.States {
				v := int64(0)
				if st == state {
					v = 1
				}
				mb.RecordInt(hwmetrics.HwStatus, now, v, &a, hwmetrics.AttrState, st)
			}
		}
		for j := range d.Partitions {
			p := &d.Partitions[j]
			pa := partitionAttributes(&a, p)
			if p.MemoryTotalMiB != nil {
				mb.RecordInt(hwmetrics.HwGpuPartitionMemoryLimit, now, *p.MemoryTotalMiB*mib, &pa)
			}
			if p.MemoryUsedMiB != nil {
				mb.RecordInt(hwmetrics.HwGpuPartitionMemoryUsage, now, *p.MemoryUsedMiB*mib, &pa)
			}
		}
	}
}

// DeviceID is the device's hw.id: its UUID, else its bus id, else
// vendor-index — the most stable identifier the CLI shows.
func DeviceID(vendor string, d *inventory.Device) string {
	switch {
	case d.UUID != nil && *d.UUID != "":
		return *d.UUID
	case d.BusID != nil && *d.BusID != "":
		return vendor + "-" + *d.BusID
	}
	return fmt.Sprintf("%s-%d", vendor, d.Index)
}

func deviceAttributes(vendor string, driver *string, d *inventory.Device) hwmetrics.Attributes {
	idx := strconv.Itoa(d.Index)
	return hwmetrics.Attributes{
		ID:              DeviceID(vendor, d),
		Vendor:          vendor,
		Model:           d.Model,
		DriverVersion:   driver,
		FirmwareVersion: d.FirmwareVersion,
		SerialNumber:    d.Serial,
		Index:           &idx,
		BusID:           d.BusID,
	}
}

func partitionAttributes(dev *hwmetrics.Attributes, p *inventory.Partition) hwmetrics.Attributes {
	id := dev.ID + "/" + p.Kind + "-" + p.ID
	if p.UUID != nil && *p.UUID != "" {
		id = *p.UUID
	}
	parent, kind, pid := dev.ID, p.Kind, p.ID
	return hwmetrics.Attributes{
		ID:               id,
		Vendor:           dev.Vendor,
		Model:            dev.Model,
		Parent:           &parent,
		PartitionKind:    &kind,
		PartitionID:      &pid,
		PartitionProfile: p.Profile,
	}
}

// healthState maps the inventory's health word to hw.state; vendor words
// we cannot map are not reported (unknown, not "ok").
func healthState(h *string) (string, bool) {
	if h == nil {
		return "", false
	}
	switch strings.ToLower(strings.TrimSpace(*h)) {
	case "ok", "healthy", "normal", "good":
		return hwmetrics.StateOK, true
	case "warning", "degraded", "general warning", "minor", "major":
		return hwmetrics.StateDegraded, true
	case "critical", "failed", "fault", "error", "alarm", "generic alarm":
		return hwmetrics.StateFailed, true
	}
	return "", false
}
