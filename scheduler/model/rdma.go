package model

import "github.com/heteroflow/heteroflow/receivers/inventory"

// rdmaPathRank orders the PCIe/NUMA paths from an accelerator to an RDMA
// adapter, closest first; unknown paths rank last.
func rdmaPathRank(l inventory.LinkType) int {
	switch l {
	case inventory.LinkPIX:
		return 0
	case inventory.LinkPXB:
		return 1
	case inventory.LinkPHB:
		return 2
	case inventory.LinkNode:
		return 3
	case inventory.LinkSys:
		return 4
	}
	return 5
}

// AttachRDMA sets each device's RDMALink to its path to the closest adapter
// with an active port, from the affinity the agent reported for the
// devices' vendor snapshot (keyed by the vendor index). Devices the
// adapters do not mention keep "".
func AttachRDMA(devs []Device, adapters []inventory.RDMADevice) {
	for i := range devs {
		devs[i].RDMALink = ""
		for _, a := range adapters {
			if !a.Active() {
				continue
			}
			for _, af := range a.Affinity {
				if af.Device != devs[i].Index || rdmaPathRank(af.Link) > 4 {
					continue
				}
				if devs[i].RDMALink == "" || rdmaPathRank(af.Link) < rdmaPathRank(devs[i].RDMALink) {
					devs[i].RDMALink = af.Link
				}
			}
		}
	}
}
