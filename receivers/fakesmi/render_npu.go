package fakesmi

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// npuSMI implements npu-smi info, info -m, info -t board|common|usages and
// the vNPU commands `set -t create-vnpu -i N -c C -f TEMPLATE` and
// `set -t destroy-vnpu -i N -c C -v VNPU_ID`. One chip per NPU.
func npuSMI(w io.Writer, p *Profile, s *State, args []string, statePath string) error {
	switch {
	case len(args) == 1 && args[0] == "info":
		return npuInfo(w, p, s)
	case len(args) == 2 && args[0] == "info" && args[1] == "-m":
		fmt.Fprintf(w, "%-31s%-31s%-31s%s\n", "NPU ID", "Chip ID", "Chip Logic ID", "Chip Name")
		for i := 0; i < p.Count; i++ {
			fmt.Fprintf(w, "%-31d%-31d%-31d%s\n", p.id(i), 0, p.id(i), "Ascend "+p.Model)
		}
		return nil
	case len(args) >= 3 && args[0] == "info" && args[1] == "-t":
		npu, err := strconv.Atoi(flagValue(args, "-i"))
		if err != nil || p.pos(npu) < 0 {
			return fmt.Errorf("Usage: npu-smi info -t %s -i <npu id>: invalid NPU ID", args[2])
		}
		d := s.dev(npu)
		switch args[2] {
		case "board":
			fmt.Fprintf(w, "%-31s: %d\n%-31s: 0\n%-31s: %s\n%-31s: %s\n%-31s: 1A2B3C%02X 00000000 00000000 00000000 00000000\n%-31s: 7.1.0.5.220\n",
				"NPU ID", npu, "Chip ID", "Chip Name", p.Model, "PCIe Bus Info", strings.ToUpper(busID(npu)), "VDie ID", npu, "Firmware Version")
		case "common":
			fmt.Fprintf(w, "%-31s: %d\n%-31s: 1\n\n%-31s: 0\n%-31s: %.0f\n%-31s: %.0f\n%-31s: %.2f\n\n%-31s: mcu\n%-31s: 40\n",
				"NPU ID", npu, "Chip Count", "Chip ID", "Aicore Usage Rate(%)", d.UtilizationPercent, "Temperature(C)", d.TemperatureCelsius,
				"NPU Real-time Power(W)", d.PowerWatts, "Chip Name", "Temperature(C)")
		case "usages":
			fmt.Fprintf(w, "%-31s: %d\n%-31s: 1\n\n%-31s: %d\n%-31s: %.0f\n%-31s: %.0f\n%-31s: 0\n",
				"NPU ID", npu, "Chip Count", "HBM Capacity(MB)", p.MemoryMiB, "HBM Usage Rate(%)", 100*float64(d.MemoryUsedMiB)/float64(p.MemoryMiB),
				"Aicore Usage Rate(%)", d.UtilizationPercent, "Chip ID")
			// DDR Capacity is what the parser keys the usages form on.
			fmt.Fprintf(w, "%-31s: 15171\n", "DDR Capacity(MB)")
		default:
			return usageError("npu-smi info -t", args)
		}
		return nil
	case len(args) >= 3 && args[0] == "set" && args[1] == "-t":
		return npuVNPU(w, p, args, statePath)
	}
	return usageError("npu-smi", args)
}

func npuInfo(w io.Writer, p *Profile, s *State) error {
	rule := "+===========================+===============+====================================================+"
	fmt.Fprintln(w, "+------------------------------------------------------------------------------------------------+")
	fmt.Fprintf(w, "| npu-smi %-24s Version: %-46s|\n", driver(p, "23.0.3"), driver(p, "23.0.3"))
	fmt.Fprintln(w, "+---------------------------+---------------+----------------------------------------------------+")
	fmt.Fprintln(w, "| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|")
	fmt.Fprintln(w, "| Chip                      | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |")
	fmt.Fprintln(w, rule)
	for i := 0; i < p.Count; i++ {
		d := s.dev(p.id(i))
		fmt.Fprintf(w, "| %-5d %-19s | OK            | %-11.1f %-17.0f 0    / 0             |\n", p.id(i), p.Model, d.PowerWatts, d.TemperatureCelsius)
		fmt.Fprintf(w, "| 0                         | %-13s | %-11.0f 0    / 0          %-20s|\n", strings.ToUpper(busID(i)), d.UtilizationPercent, fmt.Sprintf("%d / %d", d.MemoryUsedMiB, p.MemoryMiB))
		fmt.Fprintln(w, rule)
	}
	return nil
}

func npuVNPU(w io.Writer, p *Profile, args []string, statePath string) error {
	npu, err := strconv.Atoi(flagValue(args, "-i"))
	if err != nil || p.pos(npu) < 0 {
		return fmt.Errorf("Status : FAILED\nMessage : invalid NPU ID")
	}
	switch args[2] {
	case "create-vnpu":
		tmpl := flagValue(args, "-f")
		if tmpl == "" {
			return fmt.Errorf("Status : FAILED\nMessage : missing -f <template>")
		}
		return UpdateState(statePath, func(st *State) error {
			initPartitions(st, p)
			id := 100 + nextID(st.Partitions, npu)
			if v := flagValue(args, "-v"); v != "" {
				// -v picks the vNPU id (phy_id*16+100 … +115 on the chip).
				n, err := strconv.Atoi(v)
				if err != nil || n < 100 {
					return fmt.Errorf("Status : FAILED\nMessage : invalid vnpu id %s", v)
				}
				for _, x := range st.Partitions {
					if x.ID == n {
						return fmt.Errorf("Status : FAILED\nMessage : vnpu id %d already exists", n)
					}
				}
				id = n
			}
			st.Partitions = append(st.Partitions, PartitionSpec{Device: npu, Profile: tmpl, ID: id})
			fmt.Fprintf(w, "       Status : OK\n       Message : Create vnpu success\n       vNPU ID : %d\n", id)
			return nil
		})
	case "destroy-vnpu":
		v := flagValue(args, "-v")
		return UpdateState(statePath, func(st *State) error {
			initPartitions(st, p)
			for i, x := range st.Partitions {
				if x.Device == npu && strconv.Itoa(x.ID) == v {
					st.Partitions = append(st.Partitions[:i], st.Partitions[i+1:]...)
					fmt.Fprintf(w, "       Status : OK\n       Message : Destroy vnpu %s success\n", v)
					return nil
				}
			}
			return fmt.Errorf("Status : FAILED\nMessage : vnpu %s not found", v)
		})
	}
	return usageError("npu-smi set -t", args)
}
