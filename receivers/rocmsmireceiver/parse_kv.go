package rocmsmireceiver

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/heteroflow/heteroflow/receivers/inventory"
	pu "github.com/heteroflow/heteroflow/receivers/smi/parseutil"
)

// GPU[0]		: (Topology) Numa Node: 0
// HCU[0]          : Card Series: K100_AI
var reKV = regexp.MustCompile(`^(GPU|DCU|HCU)\[(\d+)\]\s*:\s*(.*)$`)

// ParseKV parses the "GPU[i] : key: value" line form that the non-JSON
// rocm-smi views print (--showtoponuma, -a, --showmeminfo …) and newer
// hy-smi prints with HCU[i]. Each card's pairs go through the same field
// mapping as the JSON form.
func ParseKV(data []byte) (*inventory.Snapshot, error) {
	if err := pu.CheckSize(data); err != nil {
		return nil, err
	}
	cards := map[int]map[string]string{}
	hygon := false
	for _, l := range pu.Lines(data) {
		m := reKV.FindStringSubmatch(strings.TrimSpace(l))
		if m == nil {
			continue
		}
		if m[1] != "GPU" {
			hygon = true
		}
		idx, err := strconv.Atoi(m[2])
		if err != nil || idx > 1<<16 {
			continue
		}
		rest := strings.TrimSpace(strings.TrimPrefix(m[3], "(Topology)"))
		// The value follows the last colon: keys such as "Temperature
		// (Sensor edge) (C)" contain none, values such as bus ids do, so
		// split at the first ": " instead.
		k, v, ok := strings.Cut(rest, ": ")
		if !ok {
			continue
		}
		if cards[idx] == nil {
			cards[idx] = map[string]string{}
		}
		cards[idx][strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	if len(cards) == 0 {
		return nil, pu.Unrecognised("rocm-smi: no GPU[i] : key: value lines")
	}
	snap := &inventory.Snapshot{Vendor: inventory.VendorAMD, Devices: []inventory.Device{}}
	idxs := make([]int, 0, len(cards))
	for i := range cards {
		idxs = append(idxs, i)
	}
	sort.Ints(idxs)
	for _, i := range idxs {
		if isHygon(cards[i]) {
			hygon = true
		}
		snap.Devices = append(snap.Devices, FromFields(i, cards[i]))
	}
	if hygon {
		snap.Vendor = inventory.VendorHygon
	}
	if len(snap.Devices) == 0 {
		return snap, fmt.Errorf("rocm-smi: %w", pu.ErrNoDevices)
	}
	return snap, nil
}
