package runner

import (
	"sort"
	"strings"

	"github.com/heteroflow/heteroflow/agent/protocol"
	"github.com/heteroflow/heteroflow/receivers/inventory"
	"github.com/heteroflow/heteroflow/receivers/vendorcatalog"
)

var rdmaRank = map[inventory.LinkType]int{inventory.LinkPIX: 0, inventory.LinkPXB: 1, inventory.LinkPHB: 2,
	inventory.LinkNode: 3, inventory.LinkSys: 4}

// RDMAEnv tells a task's collective library which RDMA adapters to use:
// the active adapters of the node (rdma: per vendor, with their affinity to
// that vendor's devices), closest to the task's devices first, in the
// vendor's variable (NCCL_IB_HCA for NCCL/RCCL; HCCL_SOCKET_IFNAME, the
// closest adapter's interface, for Ascend). Nothing without active adapters.
func RDMAEnv(devices []protocol.DeviceSlice, rdma map[string][]inventory.RDMADevice) map[string]string {
	env := map[string]string{}
	mine := map[string]map[int]bool{}
	for _, d := range devices {
		if mine[d.Vendor] == nil {
			mine[d.Vendor] = map[int]bool{}
		}
		mine[d.Vendor][d.Index] = true
	}
	for vendor, idx := range mine {
		e, _ := vendorcatalog.Lookup(vendor)
		if e.CollectiveHCAVar == "" && e.CollectiveIfVar == "" {
			continue
		}
		type cand struct {
			name, netdev string
			rank         int
		}
		var cs []cand
		for _, nic := range rdma[vendor] {
			if !nic.Active() {
				continue
			}
			best := 5
			for _, a := range nic.Affinity {
				if r, ok := rdmaRank[a.Link]; ok && idx[a.Device] && r < best {
					best = r
				}
			}
			nd := ""
			for _, p := range nic.Ports {
				if p.State == "ACTIVE" && p.NetDev != "" {
					nd = p.NetDev
					break
				}
			}
			cs = append(cs, cand{nic.Name, nd, best})
		}
		if len(cs) == 0 {
			continue
		}
		sort.SliceStable(cs, func(a, b int) bool { return cs[a].rank < cs[b].rank })
		if e.CollectiveHCAVar != "" {
			names := make([]string, len(cs))
			for i, c := range cs {
				names[i] = c.name
			}
			env[e.CollectiveHCAVar] = strings.Join(names, ",")
		}
		if e.CollectiveIfVar != "" && cs[0].netdev != "" {
			env[e.CollectiveIfVar] = cs[0].netdev
		}
	}
	return env
}
