package fakesmi

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/heteroflow/heteroflow/receivers/vendorcatalog"
)

// busID gives device i a stable PCI address (bus 0x10, 0x20, …).
func busID(i int) string { return fmt.Sprintf("0000:%02x:00.0", (0x10*(i+1))&0xff) }

// uuid gives device i a stable vendor-style id.
func uuid(prefix, model string, i int) string {
	h := uint32(2166136261)
	for _, c := range model {
		h = (h ^ uint32(c)) * 16777619
	}
	return fmt.Sprintf("%s-%08x-%04x-%04x-%04x-%012x", prefix, h, i, 0x4000+i, 0x8000+i, uint64(h)*uint64(i+1))
}

// migProfileIDs are the profile ids nvidia-smi mig -lgip prints on
// A100/H100/H200, by compute size and memory slices.
var migProfileIDs = map[[2]int]int{{1, 1}: 19, {1, 2}: 15, {2, 2}: 14, {3, 4}: 9, {4, 4}: 5, {7, 8}: 0}

// migShape is a profile's (compute sevenths, memory eighths) from the vendor
// catalog's table for the simulated model; ok is false for a profile the
// model does not offer.
func migShape(p *Profile, profile string) (compute, size int, ok bool) {
	e, _ := vendorcatalog.Lookup(p.Vendor)
	for _, pr := range e.ModelProfiles(p.Model) {
		if pr.Name == profile {
			return pr.ComputeSlices, pr.Size, true
		}
	}
	return 0, 0, false
}

func migSize(p *Profile, profile string) int {
	_, size, _ := migShape(p, profile)
	return size
}

func migProfileIDFor(p *Profile, profile string) int {
	c, size, _ := migShape(p, profile)
	return migProfileIDs[[2]int{c, size}]
}

// migPlacements places a device's instances in id order, each at the first
// legal start slot that is free — what the driver does when asked for a
// profile without a placement. Returns id → start.
func migPlacements(p *Profile, parts []PartitionSpec) map[int]int {
	out := map[int]int{}
	var used uint16
	for _, x := range parts {
		size := migSize(p, x.Profile)
		if st, ok := firstFreeStart(used, size); ok {
			out[x.ID] = st
			used |= uint16((1<<size)-1) << st
		}
	}
	return out
}

func occupied(p *Profile, parts []PartitionSpec) uint16 {
	var used uint16
	starts := migPlacements(p, parts)
	for _, x := range parts {
		if st, ok := starts[x.ID]; ok {
			size := migSize(p, x.Profile)
			used |= uint16((1<<size)-1) << st
		}
	}
	return used
}

// firstFreeStart is the MIG placement rule: an instance of size memory
// slices starts at a multiple of its size (7g: only at 0).
func firstFreeStart(used uint16, size int) (int, bool) {
	if size <= 0 || size > 8 {
		return 0, false
	}
	for st := 0; st+size <= 8; st += size {
		if size == 1 && st == 7 {
			break // 1g instances use slots 0-6; slot 7 holds no compute
		}
		if used&(uint16((1<<size)-1)<<st) == 0 {
			return st, true
		}
	}
	return 0, false
}

func nvidiaSMI(w io.Writer, p *Profile, s *State, args []string, statePath string) error {
	switch {
	case has(args, "-q") && has(args, "-x"):
		return nvidiaXML(w, p, s)
	case hasPrefix(args, "--query-gpu="):
		return nvidiaCSV(w, p, s, args)
	case hasPrefix(args, "--query-compute-apps="):
		return nvidiaApps(w, p, s, args)
	case has(args, "-L"):
		for i := 0; i < p.Count; i++ {
			fmt.Fprintf(w, "GPU %d: %s (UUID: %s)\n", i, p.Model, uuid("GPU", p.Model, i))
			for n, part := range devParts(s.partitions(p), i) {
				fmt.Fprintf(w, "  MIG %-12s Device %2d: (UUID: %s)\n", part.Profile, n, uuid("MIG", part.Profile, i*100+part.ID))
			}
		}
		return nil
	case len(args) > 0 && args[0] == "topo":
		return nvidiaTopo(w, p)
	case len(args) > 0 && args[0] == "mig":
		return nvidiaMIG(w, p, s, args[1:], statePath)
	case len(args) == 0:
		return nvidiaTable(w, p, s)
	}
	return usageError("nvidia-smi", args)
}

func nvidiaXML(w io.Writer, p *Profile, s *State) error {
	fmt.Fprintf(w, "<?xml version=\"1.0\" ?>\n<!DOCTYPE nvidia_smi_log SYSTEM \"nvsmi_device_v12.dtd\">\n<nvidia_smi_log>\n")
	fmt.Fprintf(w, "\t<driver_version>%s</driver_version>\n\t<cuda_version>12.4</cuda_version>\n\t<attached_gpus>%d</attached_gpus>\n", driver(p, "550.54.15"), p.Count)
	parts := s.partitions(p)
	for i := 0; i < p.Count; i++ {
		d := s.dev(p.id(i))
		mine := devParts(parts, i)
		bus := "0000" + busID(i)
		fmt.Fprintf(w, "\t<gpu id=\"%s\">\n\t\t<product_name>%s</product_name>\n", strings.ToUpper(bus), p.Model)
		mig := "Disabled"
		if len(mine) > 0 {
			mig = "Enabled"
		}
		fmt.Fprintf(w, "\t\t<mig_mode>\n\t\t\t<current_mig>%s</current_mig>\n\t\t</mig_mode>\n\t\t<mig_devices>\n", mig)
		for n, m := range mine {
			if m.MemoryMiB == 0 {
				m.MemoryMiB = p.MemoryMiB * int64(migSize(p, m.Profile)) / 8
			}
			fmt.Fprintf(w, "\t\t\t<mig_device>\n\t\t\t\t<index>%d</index>\n\t\t\t\t<gpu_instance_id>%d</gpu_instance_id>\n\t\t\t\t<compute_instance_id>0</compute_instance_id>\n", n, m.ID)
			used := min(d.PartitionMemoryUsedMiB[strconv.Itoa(m.ID)], m.MemoryMiB)
			fmt.Fprintf(w, "\t\t\t\t<fb_memory_usage>\n\t\t\t\t\t<total>%d MiB</total>\n\t\t\t\t\t<used>%d MiB</used>\n\t\t\t\t</fb_memory_usage>\n\t\t\t</mig_device>\n", m.MemoryMiB, used)
		}
		fmt.Fprintf(w, "\t\t</mig_devices>\n\t\t<serial>N/A</serial>\n\t\t<uuid>%s</uuid>\n\t\t<minor_number>%d</minor_number>\n", uuid("GPU", p.Model, i), i)
		fmt.Fprintf(w, "\t\t<pci>\n\t\t\t<pci_bus_id>%s</pci_bus_id>\n\t\t</pci>\n", strings.ToUpper(bus))
		fmt.Fprintf(w, "\t\t<fb_memory_usage>\n\t\t\t<total>%d MiB</total>\n\t\t\t<used>%d MiB</used>\n\t\t</fb_memory_usage>\n", p.MemoryMiB, d.MemoryUsedMiB)
		util := fmt.Sprintf("%.0f %%", d.UtilizationPercent)
		if len(mine) > 0 {
			util = "N/A" // as nvidia-smi reports under MIG
		}
		fmt.Fprintf(w, "\t\t<utilization>\n\t\t\t<gpu_util>%s</gpu_util>\n\t\t</utilization>\n", util)
		fmt.Fprintf(w, "\t\t<temperature>\n\t\t\t<gpu_temp>%.0f C</gpu_temp>\n\t\t</temperature>\n", d.TemperatureCelsius)
		fmt.Fprintf(w, "\t\t<gpu_power_readings>\n\t\t\t<power_draw>%.2f W</power_draw>\n\t\t\t<current_power_limit>400.00 W</current_power_limit>\n\t\t</gpu_power_readings>\n\t</gpu>\n", d.PowerWatts)
	}
	_, err := fmt.Fprintf(w, "</nvidia_smi_log>\n")
	return err
}

func nvidiaCSV(w io.Writer, p *Profile, s *State, args []string) error {
	var fields []string
	var format string
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--query-gpu="); ok {
			fields = strings.Split(v, ",")
		}
		if v, ok := strings.CutPrefix(a, "--format="); ok {
			format = v
		}
	}
	nounits, noheader := strings.Contains(format, "nounits"), strings.Contains(format, "noheader")
	units := map[string]string{"memory.total": "MiB", "memory.used": "MiB", "utilization.gpu": "%", "power.draw": "W", "power.limit": "W"}
	if !noheader {
		hdr := make([]string, len(fields))
		for i, f := range fields {
			hdr[i] = f
			if u, ok := units[f]; ok {
				hdr[i] = fmt.Sprintf("%s [%s]", f, u)
			}
		}
		fmt.Fprintln(w, strings.Join(hdr, ", "))
	}
	for i := 0; i < p.Count; i++ {
		d := s.dev(p.id(i))
		vals := map[string]string{
			"index": strconv.Itoa(p.id(i)), "uuid": uuid("GPU", p.Model, i), "name": p.Model, "serial": "[N/A]",
			"pci.bus_id": "0000" + strings.ToUpper(busID(i)), "driver_version": driver(p, "550.54.15"),
			"vbios_version": "96.00.74.00.0D", "memory.total": strconv.FormatInt(p.MemoryMiB, 10),
			"memory.used": strconv.FormatInt(d.MemoryUsedMiB, 10), "utilization.gpu": fmt.Sprintf("%.0f", d.UtilizationPercent),
			"temperature.gpu": fmt.Sprintf("%.0f", d.TemperatureCelsius), "power.draw": fmt.Sprintf("%.2f", d.PowerWatts),
			"power.limit": "400.00", "mig.mode.current": "Disabled",
		}
		row := make([]string, len(fields))
		for j, f := range fields {
			v, ok := vals[f]
			if !ok {
				v = "[N/A]"
			}
			if u, ok := units[f]; ok && !nounits && !strings.HasPrefix(v, "[") {
				v += " " + u
			}
			row[j] = v
		}
		fmt.Fprintln(w, strings.Join(row, ", "))
	}
	return nil
}

// nvidiaTopo prints an NVLink all-to-all matrix within each half of the
// node (NUMA 0 and 1) and SYS across the halves.
func nvidiaTopo(w io.Writer, p *Profile) error {
	half := (p.Count + 1) / 2
	fmt.Fprint(w, "\t")
	for i := 0; i < p.Count; i++ {
		fmt.Fprintf(w, "GPU%d\t", i)
	}
	fmt.Fprint(w, "CPU Affinity\tNUMA Affinity\tGPU NUMA ID\n")
	for i := 0; i < p.Count; i++ {
		fmt.Fprintf(w, "GPU%d\t", i)
		for j := 0; j < p.Count; j++ {
			switch {
			case i == j:
				fmt.Fprint(w, " X \t")
			case i/half == j/half:
				fmt.Fprint(w, "NV12\t")
			default:
				fmt.Fprint(w, "SYS\t")
			}
		}
		fmt.Fprintf(w, "%d-%d\t%d\t\tN/A\n", (i/half)*32, (i/half)*32+31, i/half)
	}
	_, err := fmt.Fprint(w, "\nLegend:\n\n  X    = Self\n  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)\n  NV#  = Connection traversing a bonded set of # NVLinks\n")
	return err
}

func nvidiaTable(w io.Writer, p *Profile, s *State) error {
	fmt.Fprintf(w, "+---------------------------------------------------------------------------------------+\n")
	fmt.Fprintf(w, "| NVIDIA-SMI %-22s Driver Version: %-12s CUDA Version: 12.4     |\n", driver(p, "550.54.15"), driver(p, "550.54.15"))
	fmt.Fprintf(w, "|-----------------------------------------+----------------------+----------------------+\n")
	fmt.Fprintf(w, "| GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |\n")
	fmt.Fprintf(w, "| Fan  Temp   Perf          Pwr:Usage/Cap |         Memory-Usage | GPU-Util  Compute M. |\n")
	fmt.Fprintf(w, "|=========================================+======================+======================|\n")
	for i := 0; i < p.Count; i++ {
		d := s.dev(p.id(i))
		fmt.Fprintf(w, "| %3d  %-30s On  | 0000%s Off |                    0 |\n", i, p.Model, strings.ToUpper(busID(i)))
		fmt.Fprintf(w, "| N/A   %2.0fC    P0         %4.0fW /  400W | %6dMiB / %6dMiB | %5.0f%%      Default |\n", d.TemperatureCelsius, d.PowerWatts, d.MemoryUsedMiB, p.MemoryMiB, d.UtilizationPercent)
		fmt.Fprintf(w, "+-----------------------------------------+----------------------+----------------------+\n")
	}
	return nil
}

func devParts(parts []PartitionSpec, dev int) []PartitionSpec {
	var out []PartitionSpec
	for _, x := range parts {
		if x.Device == dev {
			out = append(out, x)
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].ID < out[b].ID })
	return out
}

// nvidiaApps prints --query-compute-apps rows (pid, gpu_uuid, used_memory,
// in the order asked) for the state's processes; noheader/nounits as asked.
func nvidiaApps(w io.Writer, p *Profile, s *State, args []string) error {
	var fields []string
	var format string
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--query-compute-apps="); ok {
			fields = strings.Split(v, ",")
		}
		if v, ok := strings.CutPrefix(a, "--format="); ok {
			format = v
		}
	}
	if !strings.Contains(format, "noheader") {
		fmt.Fprintln(w, strings.Join(fields, ", "))
	}
	for _, pr := range s.Processes {
		if p.pos(pr.Device) < 0 {
			continue
		}
		row := make([]string, len(fields))
		for i, f := range fields {
			switch f {
			case "pid":
				row[i] = strconv.Itoa(pr.PID)
			case "gpu_uuid":
				row[i] = uuid("GPU", p.Model, pr.Device)
			case "used_memory":
				row[i] = strconv.FormatInt(pr.MemoryMiB, 10)
				if !strings.Contains(format, "nounits") {
					row[i] += " MiB"
				}
			default:
				row[i] = "[N/A]"
			}
		}
		fmt.Fprintln(w, strings.Join(row, ", "))
	}
	return nil
}
