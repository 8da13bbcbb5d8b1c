// Package rdma detects a node's InfiniBand and RoCE adapters from sysfs
// (/sys/class/infiniband, their ports and network interfaces) and how close
// each accelerator is to each adapter on the PCIe tree and NUMA nodes. Every
// function takes the sysfs root ("/" on a host, a directory in tests).
package rdma

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// Detect lists the RDMA adapters under root/sys/class/infiniband, sorted by
// name; none (no error) when the directory does not exist.
func Detect(root string) ([]inventory.RDMADevice, error) {
	base := filepath.Join(root, "sys/class/infiniband")
	ents, err := os.ReadDir(base)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("rdma: %w", err)
	}
	var out []inventory.RDMADevice
	for _, e := range ents {
		dir := filepath.Join(base, e.Name())
		d := inventory.RDMADevice{Name: e.Name(), Ports: []inventory.RDMAPort{}}
		if pci, err := filepath.EvalSymlinks(filepath.Join(dir, "device")); err == nil {
			bus := filepath.Base(pci)
			d.BusID = &bus
			d.NUMANode = numa(pci)
		}
		ports, _ := os.ReadDir(filepath.Join(dir, "ports"))
		for _, p := range ports {
			n, err := strconv.Atoi(p.Name())
			if err != nil {
				continue
			}
			pd := filepath.Join(dir, "ports", p.Name())
			port := inventory.RDMAPort{Port: n, State: state(read(pd, "state")), LinkLayer: read(pd, "link_layer"),
				RateGbps: rate(read(pd, "rate")), NetDev: read(pd, "gid_attrs/ndevs/0")}
			d.Ports = append(d.Ports, port)
		}
		sort.Slice(d.Ports, func(a, b int) bool { return d.Ports[a].Port < d.Ports[b].Port })
		if port0 := netdevOf(dir); port0 != "" {
			for i := range d.Ports {
				if d.Ports[i].NetDev == "" {
					d.Ports[i].NetDev = port0
				}
			}
		}
		d.Kind = inventory.RDMAInfiniBand
		for _, p := range d.Ports {
			if strings.EqualFold(p.LinkLayer, "Ethernet") {
				d.Kind = inventory.RDMARoCE
			}
		}
		out = append(out, d)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out, nil
}

// Kind is the node's RDMA as the scheduler's RDMA plugin reads it: the kind
// of an adapter with an active port (InfiniBand before RoCE), or "".
func Kind(devs []inventory.RDMADevice) string {
	kind := ""
	for _, d := range devs {
		if !d.Active() {
			continue
		}
		if d.Kind == inventory.RDMAInfiniBand {
			return d.Kind
		}
		kind = d.Kind
	}
	return kind
}

// Attach copies devs into every snapshot with each adapter's affinity to
// that snapshot's accelerators (by their PCI bus ids under
// root/sys/bus/pci/devices), closest first.
func Attach(root string, snaps []inventory.Snapshot, devs []inventory.RDMADevice) {
	for i := range snaps {
		s := &snaps[i]
		s.RDMA = make([]inventory.RDMADevice, len(devs))
		for j, nic := range devs {
			nic.Affinity = nil
			for _, d := range s.Devices {
				if d.BusID == nil || nic.BusID == nil {
					continue
				}
				nic.Affinity = append(nic.Affinity, inventory.RDMAAffinity{Device: d.Index,
					Link: Link(root, *d.BusID, *nic.BusID, d.NUMANode, nic.NUMANode)})
			}
			sort.SliceStable(nic.Affinity, func(a, b int) bool {
				return linkRank[nic.Affinity[a].Link] < linkRank[nic.Affinity[b].Link]
			})
			s.RDMA[j] = nic
		}
	}
}

var linkRank = map[inventory.LinkType]int{inventory.LinkPIX: 0, inventory.LinkPXB: 1, inventory.LinkPHB: 2,
	inventory.LinkNode: 3, inventory.LinkSys: 4}

// Link is the PCIe relation of two PCI functions, read from where sysfs
// places them under the root complexes (/sys/devices/pciDDDD:BB/…):
// behind one switch port (pix), one switch hierarchy (pxb), one root
// complex (phb), one NUMA node (node), or across NUMA nodes (sys).
func Link(root, busA, busB string, numaA, numaB *int) inventory.LinkType {
	pa, errA := filepath.EvalSymlinks(filepath.Join(root, "sys/bus/pci/devices", busA))
	pb, errB := filepath.EvalSymlinks(filepath.Join(root, "sys/bus/pci/devices", busB))
	if errA == nil && errB == nil {
		if numaA == nil {
			numaA = numa(pa)
		}
		if numaB == nil {
			numaB = numa(pb)
		}
		a, b := pciChain(pa), pciChain(pb)
		common := 0
		for common < len(a)-1 && common < len(b)-1 && a[common] == b[common] {
			common++
		}
		switch {
		case common == 0:
			// different root complexes
		case common == 1:
			return inventory.LinkPHB // only the root complex in common
		case common >= len(a)-2 || common >= len(b)-2:
			return inventory.LinkPIX // siblings under one bridge
		default:
			return inventory.LinkPXB
		}
	}
	if numaA != nil && numaB != nil && *numaA == *numaB && *numaA >= 0 {
		return inventory.LinkNode
	}
	return inventory.LinkSys
}

// pciChain is a device's sysfs path from its root complex: [pci0000:00,
// 0000:00:01.0, …, the device].
func pciChain(p string) []string {
	parts := strings.Split(filepath.ToSlash(p), "/")
	for i, x := range parts {
		if strings.HasPrefix(x, "pci") && strings.Contains(x, ":") {
			return parts[i:]
		}
	}
	return []string{p}
}

func numa(pciDir string) *int {
	n, err := strconv.Atoi(read(pciDir, "numa_node"))
	if err != nil || n < 0 {
		return nil
	}
	return &n
}

// netdevOf is the adapter's network interface as its PCI function lists it
// (device/net/<ifname>), or "".
func netdevOf(dir string) string {
	ents, err := os.ReadDir(filepath.Join(dir, "device/net"))
	if err != nil || len(ents) == 0 {
		return ""
	}
	return ents[0].Name()
}

func read(dir, name string) string {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// state turns sysfs "4: ACTIVE" into "ACTIVE".
func state(s string) string {
	if _, v, ok := strings.Cut(s, ":"); ok {
		return strings.TrimSpace(v)
	}
	return s
}

// rate reads "200 Gb/sec (4X HDR)".
func rate(s string) *float64 {
	f := strings.Fields(s)
	if len(f) == 0 {
		return nil
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return nil
	}
	return &v
}
