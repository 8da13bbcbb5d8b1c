package smicore

import (
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// Merge folds src (a secondary command's snapshot: topology, MIG instances,
// board details) into dst. Devices are matched by bus id, then by
// (card, chip), then by index; only fields dst lacks are taken, except
// Links and Partitions, which src owns when it has them.
func Merge(dst, src *inventory.Snapshot) {
	if src == nil {
		return
	}
	if dst.DriverVersion == nil {
		dst.DriverVersion = src.DriverVersion
	}
	if dst.ToolVersion == nil {
		dst.ToolVersion = src.ToolVersion
	}
	if dst.RuntimeVersion == nil {
		dst.RuntimeVersion = src.RuntimeVersion
	}
	dst.Warnings = append(dst.Warnings, src.Warnings...)
	for _, s := range src.Devices {
		d := find(dst, s)
		if d == nil {
			continue
		}
		fill(d, s)
	}
}

func find(dst *inventory.Snapshot, s inventory.Device) *inventory.Device {
	if s.BusID != nil {
		for i := range dst.Devices {
			if b := dst.Devices[i].BusID; b != nil && *b == *s.BusID {
				return &dst.Devices[i]
			}
		}
	}
	if s.Card != nil && s.Chip != nil {
		for i := range dst.Devices {
			d := &dst.Devices[i]
			if d.Card != nil && d.Chip != nil && *d.Card == *s.Card && *d.Chip == *s.Chip {
				return d
			}
		}
		return nil // a card/chip keyed source must not fall back to index
	}
	for i := range dst.Devices {
		if dst.Devices[i].Index == s.Index {
			return &dst.Devices[i]
		}
	}
	return nil
}

func fill(d *inventory.Device, s inventory.Device) {
	setS := func(dp **string, sp *string) {
		if *dp == nil {
			*dp = sp
		}
	}
	setS(&d.UUID, s.UUID)
	setS(&d.Serial, s.Serial)
	setS(&d.BusID, s.BusID)
	setS(&d.Health, s.Health)
	setS(&d.FirmwareVersion, s.FirmwareVersion)
	if d.Model == "" {
		d.Model = s.Model
	}
	if d.MemoryTotalMiB == nil {
		d.MemoryTotalMiB = s.MemoryTotalMiB
	}
	if d.MemoryUsedMiB == nil {
		d.MemoryUsedMiB = s.MemoryUsedMiB
	}
	for _, p := range []struct{ dp, sp **float64 }{
		{&d.UtilizationPercent, &s.UtilizationPercent}, {&d.TemperatureCelsius, &s.TemperatureCelsius},
		{&d.PowerWatts, &s.PowerWatts}, {&d.PowerLimitWatts, &s.PowerLimitWatts},
	} {
		if *p.dp == nil {
			*p.dp = *p.sp
		}
	}
	if d.NUMANode == nil {
		d.NUMANode = s.NUMANode
	}
	if len(s.Links) > 0 {
		d.Links = s.Links
	}
	if len(s.Partitions) > 0 {
		d.Partitions = mergePartitions(d.Partitions, s.Partitions)
	}
	d.MIGMode = d.MIGMode || s.MIGMode
}

// mergePartitions keeps dst's partitions (they carry memory) and adds the
// profile/placement/uuid that src knows for the same id; src partitions dst
// lacks are appended.
func mergePartitions(dst, src []inventory.Partition) []inventory.Partition {
	if len(dst) == 0 {
		return src
	}
	for _, s := range src {
		matched := false
		for i := range dst {
			if dst[i].Kind == s.Kind && (dst[i].ID == s.ID || firstID(dst[i].ID) == s.ID) {
				if dst[i].Profile == nil {
					dst[i].Profile = s.Profile
				}
				if dst[i].Placement == nil {
					dst[i].Placement = s.Placement
				}
				if dst[i].UUID == nil {
					dst[i].UUID = s.UUID
				}
				matched = true
				break
			}
		}
		if !matched {
			dst = append(dst, s)
		}
	}
	return dst
}

// firstID returns the GPU-instance part of a "gi/ci" MIG id.
func firstID(id string) string {
	for i := 0; i < len(id); i++ {
		if id[i] == '/' {
			return id[:i]
		}
	}
	return id
}
