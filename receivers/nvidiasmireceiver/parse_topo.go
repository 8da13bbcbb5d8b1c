package nvidiasmireceiver

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/heteroflow/heteroflow/receivers/inventory"
	pu "github.com/heteroflow/heteroflow/receivers/smi/parseutil"
)

// reTopoSplit splits topo -m cells: nvidia-smi separates them with TABs,
// but copies that went through a terminal have runs of spaces instead.
// "CPU Affinity" has a single space, so one space never splits.
var reTopoSplit = regexp.MustCompile(`\t| {2,}`)

var reTopoGPU = regexp.MustCompile(`^GPU(\d+)$`)

// topoLinks maps matrix cells to link types; "SOC" is the pre-2017 name of SYS.
var topoLinks = map[string]inventory.LinkType{
	"PIX": inventory.LinkPIX, "PXB": inventory.LinkPXB, "PHB": inventory.LinkPHB,
	"NODE": inventory.LinkNode, "SYS": inventory.LinkSys, "SOC": inventory.LinkSys,
}

func topoFields(line string) []string {
	var out []string
	for _, f := range reTopoSplit.Split(line, -1) {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// ParseTopo parses `nvidia-smi topo -m`. The snapshot has one device per GPU
// row carrying only Index, Links and NUMANode; merge it into a full snapshot
// by index (smi.Merge). NIC rows and the legend are skipped.
func ParseTopo(data []byte) (*inventory.Snapshot, error) {
	if err := pu.CheckSize(data); err != nil {
		return nil, err
	}
	lines := pu.Lines(data)
	var header []string
	start := -1
	for i, l := range lines {
		// The header starts with GPU0 too, but a row's second cell is "X"
		// (the GPU itself), a header's is GPU1 / NIC0 / CPU Affinity.
		if f := topoFields(l); len(f) > 0 && f[0] == "GPU0" && (len(f) == 1 || f[1] != "X") {
			header, start = f, i+1
			break
		}
	}
	if header == nil {
		return nil, pu.Unrecognised("nvidia-smi topo -m: no GPU0 header row")
	}
	numaCol := -1
	for i, h := range header {
		if h == "NUMA Affinity" {
			numaCol = i
		}
	}
	snap := &inventory.Snapshot{Vendor: inventory.VendorNVIDIA, Devices: []inventory.Device{}}
	for _, l := range lines[start:] {
		f := topoFields(l)
		if len(f) == 0 {
			if len(snap.Devices) > 0 {
				break // blank line before the legend
			}
			continue
		}
		m := reTopoGPU.FindStringSubmatch(f[0])
		if m == nil {
			continue // NIC rows
		}
		idx, _ := strconv.Atoi(m[1])
		d := inventory.Device{Index: idx, Partitions: []inventory.Partition{}}
		vals := f[1:]
		for col, h := range header {
			pm := reTopoGPU.FindStringSubmatch(h)
			if pm == nil || col >= len(vals) {
				continue
			}
			peer, _ := strconv.Atoi(pm[1])
			if peer == idx {
				continue
			}
			if link, ok := topoLink(vals[col]); ok {
				link.Peer = peer
				d.Links = append(d.Links, link)
			} else {
				snap.Warnings = append(snap.Warnings, fmt.Sprintf("GPU%d→GPU%d: unknown link %q", idx, peer, vals[col]))
			}
		}
		if numaCol >= 0 {
			if len(vals) == len(header) {
				d.NUMANode = pu.Int(vals[numaCol])
			} else {
				snap.Warnings = append(snap.Warnings, fmt.Sprintf("GPU%d: %d cells for %d columns, NUMA affinity not read", idx, len(vals), len(header)))
			}
		}
		snap.Devices = append(snap.Devices, d)
	}
	if len(snap.Devices) == 0 {
		return nil, fmt.Errorf("nvidia-smi topo -m: %w", pu.ErrNoDevices)
	}
	return snap, nil
}

func topoLink(cell string) (inventory.Link, bool) {
	cell = strings.TrimSpace(cell)
	if t, ok := topoLinks[cell]; ok {
		return inventory.Link{Type: t}, true
	}
	if n, ok := strings.CutPrefix(cell, "NV"); ok {
		if lanes, err := strconv.Atoi(n); err == nil && lanes > 0 && lanes < 1000 {
			return inventory.Link{Type: inventory.LinkNVLink, Lanes: lanes}, true
		}
	}
	return inventory.Link{}, false
}
