package fakesmi

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// hyVirtual simulates the vDCU commands of hy-smi (smi-samples README §3):
// `virtual -create-vdevices N -d DCU -vdevice-compute-units a,b,…
// -vdevice-memory-size m,n,…` (MiB), `virtual -show-vdevice-info` and
// `virtual -destroy-vdevice ID`. No public sample of their output exists:
// the answers here are the simulator's own ("vdevice <id> …" lines), which
// the agent reads back by id, compute units and memory.
func hyVirtual(w io.Writer, p *Profile, s *State, args []string, statePath string) error {
	switch {
	case has(args, "-create-vdevices"):
		n, err := strconv.Atoi(flagValue(args, "-create-vdevices"))
		dcu, derr := strconv.Atoi(flagValue(args, "-d"))
		cus := strings.Split(flagValue(args, "-vdevice-compute-units"), ",")
		mems := strings.Split(flagValue(args, "-vdevice-memory-size"), ",")
		if err != nil || derr != nil || n < 1 || p.pos(dcu) < 0 || len(cus) != n || len(mems) != n {
			return fmt.Errorf("hy-smi virtual: invalid arguments %q", strings.Join(args, " "))
		}
		return UpdateState(statePath, func(st *State) error {
			initPartitions(st, p)
			var used int64
			for _, x := range st.Partitions {
				if x.Device == dcu {
					used += x.MemoryMiB
				}
			}
			for i := 0; i < n; i++ {
				cu, err1 := strconv.Atoi(cus[i])
				mem, err2 := strconv.ParseInt(mems[i], 10, 64)
				if err1 != nil || err2 != nil || cu < 1 || mem < 1 {
					return fmt.Errorf("hy-smi virtual: invalid compute units or memory %q/%q", cus[i], mems[i])
				}
				if used+mem > p.MemoryMiB {
					return fmt.Errorf("hy-smi virtual: DCU %d has not enough memory for %d MiB", dcu, mem)
				}
				used += mem
				id := vdcuNextID(st.Partitions)
				st.Partitions = append(st.Partitions, PartitionSpec{Device: dcu, Profile: "cu" + cus[i], ID: id, MemoryMiB: mem})
				fmt.Fprintf(w, "create vdevice %d on DCU %d success: compute units %d, memory %d MiB\n", id, dcu, cu, mem)
			}
			return nil
		})
	case has(args, "-show-vdevice-info"):
		for _, x := range s.partitions(p) {
			if strings.HasPrefix(x.Profile, "cu") {
				fmt.Fprintf(w, "vdevice %d: DCU %d, compute units %s, memory %d MiB\n", x.ID, x.Device, strings.TrimPrefix(x.Profile, "cu"), x.MemoryMiB)
			}
		}
		return nil
	case has(args, "-destroy-vdevice"):
		v := flagValue(args, "-destroy-vdevice")
		return UpdateState(statePath, func(st *State) error {
			initPartitions(st, p)
			for i, x := range st.Partitions {
				if strconv.Itoa(x.ID) == v && strings.HasPrefix(x.Profile, "cu") {
					st.Partitions = append(st.Partitions[:i], st.Partitions[i+1:]...)
					fmt.Fprintf(w, "destroy vdevice %s success\n", v)
					return nil
				}
			}
			return fmt.Errorf("hy-smi virtual: vdevice %s not found", v)
		})
	}
	return usageError("hy-smi virtual", args)
}

func vdcuNextID(parts []PartitionSpec) int {
	id := 0
	for _, x := range parts {
		if strings.HasPrefix(x.Profile, "cu") && x.ID >= id {
			id = x.ID + 1
		}
	}
	return id
}
