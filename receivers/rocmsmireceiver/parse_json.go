package rocmsmireceiver

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/heteroflow/heteroflow/receivers/inventory"
	pu "github.com/heteroflow/heteroflow/receivers/smi/parseutil"
)

// reCardKey matches the per-card object keys: card0, card1, …
var reCardKey = regexp.MustCompile(`^card(\d+)$`)

// ParseJSON parses `rocm-smi … --json`: an object keyed by cardN whose
// values are string maps. Key names differ between ROCm releases and the
// Hygon build (see fieldsFromMap); memory is in bytes ("VRAM Total Memory
// (B)") on AMD and in MiB ("vram Total Memory (MiB)") on Hygon. A Hygon
// build is recognised by its vendor string or DCU keys and labelled hygon.
func ParseJSON(data []byte) (*inventory.Snapshot, error) {
	if err := pu.CheckSize(data); err != nil {
		return nil, err
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("rocm-smi --json: %w", err)
	}
	type card struct {
		idx    int
		fields map[string]string
	}
	var cards []card
	snap := &inventory.Snapshot{Vendor: inventory.VendorAMD, Devices: []inventory.Device{}}
	for k, v := range raw {
		m := reCardKey.FindStringSubmatch(k)
		if m == nil {
			if k == "system" {
				var sys map[string]string
				if json.Unmarshal(v, &sys) == nil {
					snap.DriverVersion = pu.Str(sys["Driver version"])
				}
			}
			continue
		}
		idx, err := strconv.Atoi(m[1])
		if err != nil || idx > 1<<16 {
			continue
		}
		var f map[string]string
		if err := json.Unmarshal(v, &f); err != nil {
			snap.Warnings = append(snap.Warnings, fmt.Sprintf("%s: %v", k, err))
			continue
		}
		cards = append(cards, card{idx, f})
	}
	if len(cards) == 0 {
		return nil, pu.Unrecognised("rocm-smi --json: no cardN objects")
	}
	sort.Slice(cards, func(i, j int) bool { return cards[i].idx < cards[j].idx })
	for _, c := range cards {
		d := FromFields(c.idx, c.fields)
		if isHygon(c.fields) {
			snap.Vendor = inventory.VendorHygon
		}
		snap.Devices = append(snap.Devices, d)
	}
	return snap, nil
}

// isHygon recognises Hygon's build of rocm-smi / hy-smi by its fields.
func isHygon(f map[string]string) bool {
	for k, v := range f {
		lk := strings.ToLower(k)
		if strings.HasPrefix(lk, "dcu ") || strings.HasPrefix(lk, "hcu ") || strings.HasSuffix(lk, "(mib)") {
			return true
		}
		if lk == "card vendor" && (strings.Contains(v, "Haiguang") || strings.Contains(strings.ToLower(v), "hygon")) {
			return true
		}
	}
	return false
}

// FromFields maps one card's key/value fields (JSON or "GPU[i] : key:
// value" lines) onto a device. Keys are compared case-insensitively
// because capitalisation changes between releases ("VRAM"/"vram").
func FromFields(idx int, f map[string]string) inventory.Device {
	get := func(keys ...string) string {
		for _, want := range keys {
			for k, v := range f {
				if strings.EqualFold(strings.TrimSpace(k), want) {
					return v
				}
			}
		}
		return ""
	}
	d := inventory.Device{Index: idx, Partitions: []inventory.Partition{}}
	d.Model = strings.TrimSpace(get("Card Series", "Card series", "Device Name", "Card Model", "Card model"))
	d.UUID = pu.Str(get("Unique ID", "UUID"))
	d.Serial = pu.Str(get("Serial Number"))
	if total := get("VRAM Total Memory (B)"); total != "" {
		d.MemoryTotalMiB = pu.MiB(total, "B")
		d.MemoryUsedMiB = pu.MiB(get("VRAM Total Used Memory (B)"), "B")
	} else {
		d.MemoryTotalMiB = pu.MiB(get("VRAM Total Memory (MiB)"), "MiB")
		d.MemoryUsedMiB = pu.MiB(get("VRAM Total Used Memory (MiB)"), "MiB")
	}
	d.UtilizationPercent = pu.Float(get("GPU use (%)", "DCU use (%)", "HCU use (%)"))
	d.TemperatureCelsius = pu.Float(get("Temperature (Sensor edge) (C)", "Temperature (Sensor junction) (C)"))
	d.PowerWatts = pu.Float(get("Average Graphics Package Power (W)", "Current Socket Graphics Package Power (W)"))
	d.PowerLimitWatts = pu.Float(get("Max Graphics Package Power (W)"))
	d.BusID = pu.BusID(get("PCI Bus"))
	d.NUMANode = pu.Int(get("Numa Node", "(Topology) Numa Node"))
	d.FirmwareVersion = pu.Str(get("VBIOS version"))
	return d
}
