package mthreadsgmireceiver

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/heteroflow/heteroflow/receivers/inventory"
	pu "github.com/heteroflow/heteroflow/receivers/smi/parseutil"
)

var (
	// mthreads-gmi:1.14.0          Driver Version:2.7.0
	reBanner = regexp.MustCompile(`mthreads-gmi:\s*(\S+)(?:\s+Driver Version:\s*(\S+))?`)
	// 1339MiB(16384MiB): used(total)
	reMem   = regexp.MustCompile(`(\d+(?:\.\d+)?\s*[KMG]i?B)\((\d+(?:\.\d+)?\s*[KMG]i?B)\)`)
	reDevID = regexp.MustCompile(`^(\d+)\s+(.+)$`)
)

// ParseTable parses the default mthreads-gmi table. It has no outer box:
// each device is three lines split by '|' (1.x; 2.x adds a Perf column):
//
//	0    MTT S80        |00000000:01:00.0    |98%   1339MiB(16384MiB)
//	     Physical       |16x(16x)            |56C   YES
//	                                         |      N/A
//
// Device Type "MPC Parent" marks a GPU split into MPC partitions.
func ParseTable(data []byte) (*inventory.Snapshot, error) {
	if err := pu.CheckSize(data); err != nil {
		return nil, err
	}
	lines := pu.Lines(data)
	snap := &inventory.Snapshot{Vendor: inventory.VendorMThreads, Devices: []inventory.Device{}}
	start := -1
	for i, l := range lines {
		if m := reBanner.FindStringSubmatch(l); m != nil && snap.ToolVersion == nil {
			snap.ToolVersion = pu.Str(m[1])
			snap.DriverVersion = pu.Str(m[2])
		}
		if strings.HasPrefix(strings.TrimSpace(l), "+-") && start < 0 && snap.ToolVersion != nil {
			start = i + 1
			break
		}
	}
	if snap.ToolVersion == nil {
		return nil, pu.Unrecognised("mthreads-gmi: no \"mthreads-gmi:<ver>\" banner")
	}
	if start < 0 {
		return nil, pu.Unrecognised("mthreads-gmi: no device table")
	}
	var cur *inventory.Device
	row := 0
	for _, l := range lines[start:] {
		if strings.TrimSpace(l) == "" || strings.Contains(l, "Processes") {
			break
		}
		if pu.IsRule(l) { // separator between devices
			cur = nil
			continue
		}
		cells := strings.Split(l, "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if m := reDevID.FindStringSubmatch(cells[0]); m != nil && len(cells) >= 3 {
			snap.Devices = append(snap.Devices, inventory.Device{Partitions: []inventory.Partition{}})
			cur, row = &snap.Devices[len(snap.Devices)-1], 0
			cur.Index = *pu.Int(m[1])
			cur.Model = m[2]
			cur.BusID = pu.BusID(cells[1])
			f := pu.Fields(cells[2])
			cur.UtilizationPercent = pu.Float(pu.FirstWithSuffix(f, "%"))
			if mm := reMem.FindStringSubmatch(cells[2]); mm != nil {
				cur.MemoryUsedMiB, cur.MemoryTotalMiB = pu.MiB(mm[1], "MiB"), pu.MiB(mm[2], "MiB")
				if *cur.MemoryUsedMiB > *cur.MemoryTotalMiB {
					snap.Warnings = append(snap.Warnings, fmt.Sprintf("device %d: used %d MiB exceeds total %d MiB (IOMMU misconfiguration?)", cur.Index, *cur.MemoryUsedMiB, *cur.MemoryTotalMiB))
				}
			}
			continue
		}
		if cur == nil {
			continue
		}
		row++
		if row == 1 && len(cells) >= 3 {
			cur.TemperatureCelsius = pu.Float(pu.FirstWithSuffix(pu.Fields(cells[2]), "C"))
			if strings.HasPrefix(cells[0], "MPC Parent") {
				snap.Warnings = append(snap.Warnings, fmt.Sprintf("device %d: MPC parent; partitions are not listed by this form", cur.Index))
			}
		}
	}
	if len(snap.Devices) == 0 {
		return snap, fmt.Errorf("mthreads-gmi: %w", pu.ErrNoDevices)
	}
	return snap, nil
}
