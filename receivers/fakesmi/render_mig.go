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
			for _, x := range devParts(parts, g) {
				prof := migProfiles[migKey(x.Profile)]
				fmt.Fprintf(w, "|  %2d  MIG %-12s %4d %8d %10s     |\n", g, x.Profile, prof.id, x.ID, fmt.Sprintf("%d:%d", x.ID%8, prof.eighths))
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
					key := migKey(name)
					prof, ok := migProfiles[key]
					if !ok {
						return fmt.Errorf("Unable to create a GPU instance on GPU %d using profile %s: Invalid Argument", g, name)
					}
					id := nextID(st.Partitions, g)
					st.Partitions = append(st.Partitions, PartitionSpec{Device: g, Profile: name, ID: id, MemoryMiB: p.MemoryMiB * int64(prof.eighths) / 8})
					fmt.Fprintf(w, "Successfully created GPU instance ID %2d on GPU %2d using profile MIG %s (ID %2d)\n", id, g, name, prof.id)
				}
			}
			return nil
		})
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
