package model

// Mode is what a device is currently used for. It encodes the QoS isolation
// rule: a device in ModeShared (silver/bronze slices) never takes a gold
// slice, and a device holding gold partitions or a whole gold task never
// takes a shared slice — so Gold never shares outside a hardware partition.
type Mode uint8

const (
	ModeFree        Mode = iota // nothing placed
	ModeShared                  // silver/bronze slices by MiB and %
	ModePartitioned             // gold hardware partitions (MIG, vNPU)
	ModeExclusive               // one gold task owns the whole device
)

// DeviceState is the mutable capacity of one device. All fields are kept
// incrementally by Apply/Remove; nothing is recomputed in the hot path.
type DeviceState struct {
	FreeMilli  int32 // unallocated compute, 0..1000, whatever the mode
	MemUsed    int64 // accounted MiB: silver MiB + bronze MiB / overcommit ratio
	Mode       Mode
	Slices     int16  // slices placed on the device
	PartMask   uint16 // MIG memory slices occupied (bit i = slice i)
	PartSlices int16  // compute slices used by partitions (MIG sevenths, AI cores)
	PartMem    int64  // memory MiB held by partitions
}

// NodeInfo is one node plus its mutable state, as the scheduler sees it.
// Version increases on every change, so per-node caches (the framework's
// score memo, the Fragmentation plugin) know when they are stale.
type NodeInfo struct {
	Index     int
	Node      *Node
	FreeCPU   int64
	FreeMem   int64
	FreeMilli int64 // Σ DeviceState.FreeMilli
	Devices   []DeviceState
	Version   uint64
}

func newNodeInfo(idx int, n *Node) *NodeInfo {
	ni := &NodeInfo{Index: idx, Node: n, FreeCPU: n.CPUMilli, FreeMem: n.MemoryMiB,
		Devices: make([]DeviceState, len(n.Devices)), Version: 1}
	for i := range ni.Devices {
		ni.Devices[i].FreeMilli = WholeMilli
	}
	ni.FreeMilli = int64(len(n.Devices)) * WholeMilli
	return ni
}

// partitionMilli converts compute slices of a partition to milli-devices.
func partitionMilli(slices, total int) int32 {
	return int32(slices * WholeMilli / total)
}

// AccountedMiB is the device memory a slice counts against its device:
// bronze overcommits by ratioMilli/1000, so each bronze MiB counts less.
func AccountedMiB(s *Slice, ratioMilli int64) int64 { return accounted(s, ratioMilli) }

func accounted(s *Slice, ratioMilli int64) int64 {
	if s.QoS == QoSBronze && ratioMilli > 1000 {
		return (s.MemoryMiB*1000 + ratioMilli - 1) / ratioMilli
	}
	return s.MemoryMiB
}

// apply adds a slice to the device state; the caller has checked the fit.
func (d *DeviceState) apply(s *Slice, ratioMilli int64) {
	d.FreeMilli -= s.ComputeMilli
	d.Slices++
	switch {
	case s.QoS != QoSGold:
		d.Mode = ModeShared
		d.MemUsed += accounted(s, ratioMilli)
	case s.Profile != "":
		d.Mode = ModePartitioned
		d.PartSlices += int16(s.PartSlices)
		d.PartMem += s.MemoryMiB
		if s.Start >= 0 {
			d.PartMask |= maskOf(s.Start, s.PartSize)
		}
	default:
		d.Mode = ModeExclusive
		d.MemUsed += s.MemoryMiB
	}
}

// With is the state the device would have with slice s placed on it (the
// caller has checked the fit): the Fragmentation plugin prices a candidate
// by the state after it without touching the ledger.
func (d DeviceState) With(s *Slice, ratioMilli int64) DeviceState {
	d.apply(s, ratioMilli)
	return d
}

// remove undoes apply.
func (d *DeviceState) remove(s *Slice, ratioMilli int64) {
	d.FreeMilli += s.ComputeMilli
	d.Slices--
	switch {
	case s.QoS != QoSGold:
		d.MemUsed -= accounted(s, ratioMilli)
	case s.Profile != "":
		d.PartSlices -= int16(s.PartSlices)
		d.PartMem -= s.MemoryMiB
		if s.Start >= 0 {
			d.PartMask &^= maskOf(s.Start, s.PartSize)
		}
	default:
		d.MemUsed -= s.MemoryMiB
	}
	if d.Slices == 0 {
		*d = DeviceState{FreeMilli: WholeMilli}
	}
}

func maskOf(start, size int) uint16 {
	return uint16((1<<size)-1) << start
}
