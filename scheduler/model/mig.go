package model

import (
	"fmt"
	"math"
	"sort"

	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// migState says whether an inventory device is in MIG mode and which of its
// 8 memory slices its current MIG instances hold. nvidia-smi -q -x gives an
// instance's memory but not its placement; `mig -lgi` gives "start:size".
// Without a placement an instance is put where the driver puts it when
// asked without one: the first legal start slot of its size, largest first.
func migState(sd *Device, d inventory.Device) (bool, uint16) {
	var parts []inventory.Partition
	for _, p := range d.Partitions {
		if p.Kind == "mig" {
			parts = append(parts, p)
		}
	}
	on := d.MIGMode || len(parts) > 0
	if !on {
		return false, 0
	}
	var mask uint16
	var unplaced []int
	for _, p := range parts {
		if start, size, ok := placement(p); ok {
			mask |= maskOf(start, size)
			continue
		}
		if size := migSize(sd, p); size > 0 {
			unplaced = append(unplaced, size)
		}
	}
	sort.Sort(sort.Reverse(sort.IntSlice(unplaced)))
	for _, size := range unplaced {
		for _, st := range migStarts(size) {
			if mask&maskOf(st, size) == 0 {
				mask |= maskOf(st, size)
				break
			}
		}
	}
	return true, mask
}

func placement(p inventory.Partition) (start, size int, ok bool) {
	if p.Placement == nil {
		return 0, 0, false
	}
	var a, b int
	n, err := fmt.Sscanf(*p.Placement, "%d:%d", &a, &b)
	if err != nil || n != 2 || a < 0 || b < 1 || a+b > 8 {
		return 0, 0, false
	}
	return a, b, true
}

// migSize is an instance's memory slices: its profile's (when the profile
// is named and tabled), else its memory over an eighth of the device's.
func migSize(sd *Device, p inventory.Partition) int {
	if p.Profile != nil {
		for _, pr := range sd.Isolation.Profiles {
			if pr.Name == *p.Profile && pr.Size > 0 {
				return pr.Size
			}
		}
	}
	if p.MemoryTotalMiB != nil && sd.MemoryMiB > 0 {
		eighth := float64(sd.MemoryMiB) / 8
		n := int(math.Round(float64(*p.MemoryTotalMiB) / eighth))
		switch {
		case n <= 1:
			return 1
		case n <= 2:
			return 2
		case n <= 4:
			return 4
		}
		return 8
	}
	return 8 // unknown shape: hold the whole GPU rather than collide
}

// migStarts are the legal start slots of an instance of size memory slices
// (NVIDIA MIG user guide, placement table).
func migStarts(size int) []int {
	switch size {
	case 1:
		return []int{0, 1, 2, 3, 4, 5, 6}
	case 2:
		return []int{0, 2, 4, 6}
	case 4:
		return []int{0, 4}
	}
	return []int{0}
}
