package plugins

import (
	"context"

	"github.com/heteroflow/heteroflow/receivers/inventory"
	"github.com/heteroflow/heteroflow/scheduler/framework"
	"github.com/heteroflow/heteroflow/scheduler/model"
)

// Topology scores multi-device choices: devices joined by a fast
// interconnect (NVLink, HCCS, MLU-Link, xGMI, MetaX link) and on one NUMA
// node train faster than devices across PCIe switches or sockets. For a task
// that asks for RDMA (NCCL/HCCL over InfiniBand or RoCE) it also weighs each
// device's path to the closest active adapter: GPUDirect RDMA is fastest
// from a device under the adapter's PCIe switch and slowest across sockets.
type Topology struct{}

var _ framework.ScorePlugin = Topology{}

// NewTopology builds the plugin (no args).
func NewTopology(args framework.Args, _ framework.Handle) (framework.Plugin, error) {
	return Topology{}, args.Decode(&struct{}{})
}

// Name implements framework.Plugin.
func (Topology) Name() string { return NameTopology }

// Score implements framework.ScorePlugin.
func (Topology) Score(_ context.Context, c *framework.Cycle, n *model.NodeInfo, a *framework.Assignment) (float64, framework.Status) {
	return topologyScore(n.Node, a.Slices, c.Req.RDMA), framework.OK
}

// linkQuality ranks interconnects in [0, 1]: one fast-link hop is 1,
// across sockets 0.
func linkQuality(t inventory.LinkType) float64 {
	switch t {
	case inventory.LinkNVLink, inventory.LinkHCCS, inventory.LinkMLULink, inventory.LinkXGMI, inventory.LinkMetaX:
		return 1
	case inventory.LinkPIX:
		return 0.5
	case inventory.LinkPXB:
		return 0.4
	case inventory.LinkPHB:
		return 0.3
	case inventory.LinkNode:
		return 0.2
	}
	return 0
}

// pairQuality is the best link from device a to device b (by vendor index).
func pairQuality(n *model.Node, a, b int) float64 {
	best := 0.0
	for _, l := range n.Devices[a].Links {
		if l.Peer == n.Devices[b].Index {
			best = max(best, linkQuality(l.Type))
		}
	}
	return best
}

// adapterQuality ranks a device's path to its closest RDMA adapter in
// [0, 1]: under the same PCIe switch 1, across sockets (or unknown) 0.
func adapterQuality(t inventory.LinkType) float64 {
	switch t {
	case inventory.LinkPIX:
		return 1
	case inventory.LinkPXB:
		return 0.8
	case inventory.LinkPHB:
		return 0.6
	case inventory.LinkNode:
		return 0.4
	}
	return 0
}

// topologyScore = 100 × (0.6 × mean pair link quality + 0.4 × [one NUMA]).
// For an RDMA task on a node that reports adapter affinity it is
// 100 × (0.45 × mean pair link quality + 0.3 × [one NUMA] + 0.25 × mean
// adapter quality). A single device (or none) has nothing to connect: 100.
func topologyScore(n *model.Node, slices []model.Slice, rdma bool) float64 {
	if len(slices) < 2 {
		return 100
	}
	sum, pairs := 0.0, 0
	sameNUMA := true
	adapter := 0.0
	for i := range slices {
		for j := i + 1; j < len(slices); j++ {
			sum += pairQuality(n, slices[i].Device, slices[j].Device)
			pairs++
		}
		if n.Devices[slices[i].Device].NUMA != n.Devices[slices[0].Device].NUMA {
			sameNUMA = false
		}
		adapter += adapterQuality(n.Devices[slices[i].Device].RDMALink)
	}
	numa := 0.0
	if sameNUMA {
		numa = 1
	}
	if rdma && hasAdapterAffinity(n) {
		return 100 * (0.45*sum/float64(pairs) + 0.3*numa + 0.25*adapter/float64(len(slices)))
	}
	return 100 * (0.6*sum/float64(pairs) + 0.4*numa)
}

func hasAdapterAffinity(n *model.Node) bool {
	for i := range n.Devices {
		if n.Devices[i].RDMALink != "" {
			return true
		}
	}
	return false
}

// pickSet chooses k of the candidate devices into out. One device: the
// tightest (or emptiest) free compute. Several: grow a set greedily from
// each seed, preferring the same NUMA node and the best link to the set,
// then tightness; keep the set with the best topology score. Candidates
// are sorted in place (insertion sort: at most 64, no allocation). rdma:
// the task asks for RDMA, so sets near the node's adapters are preferred.
func pickSet(n *model.NodeInfo, cands []cand, k int, tight, rdma bool, out *framework.Assignment) {
	for i := 1; i < len(cands); i++ {
		for j := i; j > 0 && better(cands[j], cands[j-1], tight); j-- {
			cands[j], cands[j-1] = cands[j-1], cands[j]
		}
	}
	if k == 1 || !(hasTopology(n.Node) || rdma && hasAdapterAffinity(n.Node)) {
		for i := 0; i < k; i++ {
			out.Slices = append(out.Slices, cands[i].slice)
		}
		return
	}
	bestScore, bestSeed := -1.0, 0
	for seed := range cands {
		out.Slices = growSet(n.Node, cands, seed, k, rdma, out.Slices[:0])
		if s := topologyScore(n.Node, out.Slices, rdma); s > bestScore {
			bestScore, bestSeed = s, seed
		}
	}
	out.Slices = growSet(n.Node, cands, bestSeed, k, rdma, out.Slices[:0])
}

func better(a, b cand, tight bool) bool {
	if a.free != b.free {
		return (a.free < b.free) == tight
	}
	return a.dev < b.dev
}

func hasTopology(n *model.Node) bool {
	for i := range n.Devices {
		if len(n.Devices[i].Links) > 0 || n.Devices[i].NUMA >= 0 {
			return true
		}
	}
	return false
}

// growSet adds, k times, the unused candidate with the best (same NUMA as
// the seed, summed link quality to the set, and for RDMA tasks closeness to
// an adapter) — candidates come pre-sorted by tightness, so ties keep the
// packing order.
func growSet(n *model.Node, cands []cand, seed, k int, rdma bool, set []model.Slice) []model.Slice {
	set = append(set, cands[seed].slice)
	numa := n.Devices[cands[seed].dev].NUMA
	var used uint64 = 1 << uint(seed)
	for len(set) < k {
		bi, bq := -1, -1.0
		for i, c := range cands {
			if used&(1<<uint(i)) != 0 {
				continue
			}
			q := 0.0
			if n.Devices[c.dev].NUMA == numa {
				q += 10
			}
			for _, s := range set {
				q += pairQuality(n, s.Device, c.dev)
			}
			if rdma {
				// Below a NUMA match (10), above one link (≤ 1 per member).
				q += 5 * adapterQuality(n.Devices[c.dev].RDMALink)
			}
			if q > bq {
				bi, bq = i, q
			}
		}
		if bi < 0 {
			break
		}
		used |= 1 << uint(bi)
		set = append(set, cands[bi].slice)
	}
	return set
}
