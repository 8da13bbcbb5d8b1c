package fakesmi

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// nvidiaMIG implements `nvidia-smi mig -lgi`, `mig -cgi <profiles> [-C]`
// and `mig -dgi [-gi <id>]`, each optionally scoped with `-i <gpu>`. Created
// and destroyed instances are written to the state file.
func nvidiaMIG(w io.Writer, p *Profile, s *State, args []string, statePath string) error {
	gpus := []int{}
	if v := flagValue(args, "-i"); v != "" {
		for _, x := range strings.Split(v, ",") {
			n, err := strconv.Atoi(x)
			if err != nil || n < 0 || n >= p.Count {
				return fmt.Errorf("Invalid GPU index %q", x)
			}
			gpus = append(gpus, n)
		}
	} else {
		for i := 0; i < p.Count; i++ {
			gpus = append(gpus, i)
		}
	}
	switch {
	case has(args, "-lgi"):
		parts := s.partitions(p)
		fmt.Fprintln(w, "+-------------------------------------------------------+")
		fmt.Fprintln(w, "| GPU instances:                                        |")
		fmt.Fprintln(w, "| GPU   Name             Profile  Instance   Placement  |")
		fmt.Fprintln(w, "|                          ID       ID       Start:Size |")
		fmt.Fprintln(w, "|=======================================================|")
		for _, g := range gpus {
			mine := devParts(parts, g)
			starts := migPlacements(p, mine)
			for _, x := range mine {
				fmt.Fprintf(w, "|  %2d  MIG %-12s %4d %8d %10s     |\n", g, x.Profile, migProfileIDFor(p, x.Profile), x.ID,
					fmt.Sprintf("%d:%d", starts[x.ID], migSize(p, x.Profile)))
				fmt.Fprintln(w, "+-------------------------------------------------------+")
			}
		}
		return nil
	case has(args, "-cgi"):
		profiles := strings.Split(flagValue(args, "-cgi"), ",")
		return UpdateState(statePath, func(st *State) error {
			initPartitions(st, p)
			for _, g := range gpus {
				for _, name := range profiles {
					size := migSize(p, name)
					if size == 0 {
						return fmt.Errorf("Unable to create a GPU instance on GPU %d using profile %s: Invalid Argument", g, name)
					}
					mine := devParts(st.Partitions, g)
					if _, ok := firstFreeStart(occupied(p, mine), size); !ok {
						return fmt.Errorf("Unable to create a GPU instance on GPU %d using profile %s: Insufficient Resources", g, name)
					}
					id := nextID(st.Partitions, g)
					st.Partitions = append(st.Partitions, PartitionSpec{Device: g, Profile: name, ID: id, MemoryMiB: p.MemoryMiB * int64(size) / 8})
					fmt.Fprintf(w, "Successfully created GPU instance ID %2d on GPU %2d using profile MIG %s (ID %2d)\n", id, g, name, migProfileIDFor(p, name))
					if has(args, "-C") {
						fmt.Fprintf(w, "Successfully created compute instance ID  0 on GPU %2d GPU instance ID %2d using profile MIG %s (ID  %d)\n", g, id, name, migProfileIDFor(p, name))
					}
				}
			}
			return nil
		})
	case has(args, "-dci"):
		gi := flagValue(args, "-gi")
		for _, g := range gpus {
			for _, x := range devParts(s.partitions(p), g) {
				if gi == "" || strconv.Itoa(x.ID) == gi {
					fmt.Fprintf(w, "Successfully destroyed compute instance ID  0 from GPU %2d GPU instance ID %2d\n", g, x.ID)
					return nil
				}
			}
		}
		return fmt.Errorf("Unable to destroy compute instance: Not Found")
	case has(args, "-dgi"):
		gi := flagValue(args, "-gi")
		return UpdateState(statePath, func(st *State) error {
			initPartitions(st, p)
			kept := st.Partitions[:0]
			removed := 0
			for _, x := range st.Partitions {
				if contains(gpus, x.Device) && (gi == "" || strconv.Itoa(x.ID) == gi) {
					fmt.Fprintf(w, "Successfully destroyed GPU instance ID %2d from GPU %2d\n", x.ID, x.Device)
					removed++
					continue
				}
				kept = append(kept, x)
			}
			st.Partitions = kept
			if removed == 0 {
				return fmt.Errorf("Unable to destroy GPU instance: Not Found")
			}
			return nil
		})
	}
	return usageError("nvidia-smi mig", args)
}

func initPartitions(st *State, p *Profile) {
	if !st.Initialised {
		st.Partitions = append([]PartitionSpec(nil), p.Partitions...)
		st.Initialised = true
	}
}

func nextID(parts []PartitionSpec, dev int) int {
	id := 1
	for _, x := range parts {
		if x.Device == dev && x.ID >= id {
			id = x.ID + 1
		}
	}
	return id
}
