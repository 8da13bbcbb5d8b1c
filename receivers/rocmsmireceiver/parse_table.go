package rocmsmireceiver

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/heteroflow/heteroflow/receivers/inventory"
	pu "github.com/heteroflow/heteroflow/receivers/smi/parseutil"
)

var (
	reTemp  = regexp.MustCompile(`^(\d+(?:\.\d+)?)(?:°C|C|c)$`)
	reWatts = regexp.MustCompile(`^(\d+(?:\.\d+)?)W$`)
)

// ParseConcise parses the default rocm-smi table ("Concise Info"). Its
// header names the first column GPU (AMD), DCU or HCU (Hygon builds) or
// Device (ROCm 6). Memory appears only as VRAM%, so memory stays unknown.
func ParseConcise(data []byte) (*inventory.Snapshot, error) {
	return ParseConciseVendor(data, inventory.VendorAMD)
}

// ParseConciseVendor is ParseConcise labelled with vendor (hy-smi reuses it).
//
// Columns are located by name in the header. Values are taken by name when
// the row has as many cells as the header; otherwise (ROCm 6 puts spaces
// inside its IDs and Partitions cells) by pattern: the first °C/C cell is
// the temperature, the first W cell the power, and the last two % cells are
// VRAM% and GPU%.
func ParseConciseVendor(data []byte, vendor string) (*inventory.Snapshot, error) {
	if err := pu.CheckSize(data); err != nil {
		return nil, err
	}
	lines := pu.Lines(data)
	var header []string
	start := -1
	for i, l := range lines {
		f := strings.Fields(l)
		if len(f) > 3 && (f[0] == "GPU" || f[0] == "DCU" || f[0] == "HCU" || f[0] == "Device") && containsField(f, "Temp") {
			header, start = f, i+1
			break
		}
	}
	if header == nil {
		return nil, pu.Unrecognised("rocm-smi table: no GPU/DCU/HCU/Device header with a Temp column")
	}
	col := func(name string) int {
		for i, h := range header {
			if h == name {
				return i
			}
		}
		return -1
	}
	utilCol := col(header[0] + "%")
	if utilCol < 0 {
		utilCol = col("GPU%")
	}
	snap := &inventory.Snapshot{Vendor: vendor, Devices: []inventory.Device{}}
	for _, l := range lines[start:] {
		f := strings.Fields(l)
		if len(f) == 0 || pu.IsRule(l) || strings.HasPrefix(f[0], "(") {
			continue
		}
		if strings.HasPrefix(l, "=") || strings.HasPrefix(strings.TrimSpace(l), "End of") {
			break
		}
		idx := pu.Int(f[0])
		if idx == nil {
			continue
		}
		d := inventory.Device{Index: *idx, Partitions: []inventory.Partition{}}
		if len(f) == len(header) {
			if c := col("Temp"); c >= 0 {
				d.TemperatureCelsius = temp(f[c])
			}
			for _, name := range []string{"AvgPwr", "Power"} {
				if c := col(name); c >= 0 && d.PowerWatts == nil {
					d.PowerWatts = pu.Float(f[c])
				}
			}
			if c := col("PwrCap"); c >= 0 {
				d.PowerLimitWatts = pu.Float(f[c])
			}
			if utilCol >= 0 {
				d.UtilizationPercent = pu.Float(f[utilCol])
			}
		} else {
			var pct []string
			for _, x := range f[1:] {
				switch {
				case d.TemperatureCelsius == nil && reTemp.MatchString(x):
					d.TemperatureCelsius = temp(x)
				case d.PowerWatts == nil && reWatts.MatchString(x):
					d.PowerWatts = pu.Float(x)
				case strings.HasSuffix(x, "%"):
					pct = append(pct, x)
				}
			}
			if len(pct) >= 2 {
				d.UtilizationPercent = pu.Float(pct[len(pct)-1])
			}
			snap.Warnings = append(snap.Warnings, fmt.Sprintf("device %d: %d cells for %d columns, read by pattern", *idx, len(f), len(header)))
		}
		snap.Devices = append(snap.Devices, d)
	}
	if len(snap.Devices) == 0 {
		return snap, fmt.Errorf("rocm-smi table: %w", pu.ErrNoDevices)
	}
	return snap, nil
}

func temp(s string) *float64 {
	m := reTemp.FindStringSubmatch(s)
	if m == nil {
		return nil
	}
	return pu.Float(m[1])
}

func containsField(f []string, s string) bool {
	for _, x := range f {
		if x == s {
			return true
		}
	}
	return false
}
