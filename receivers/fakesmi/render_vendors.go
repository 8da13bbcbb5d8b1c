package fakesmi

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// rocmJSON prints `rocm-smi … --json` (bytes) or, for Hygon, the hy-smi
// JSON (MiB, lower-case "vram", DCU keys).
func rocmJSON(w io.Writer, p *Profile, s *State, hygon bool) error {
	out := map[string]map[string]string{}
	for i := 0; i < p.Count; i++ {
		d := s.dev(p.id(i))
		c := map[string]string{
			"Card Series": p.Model, "Unique ID": fmt.Sprintf("0x%016x", 0x5c88007d76037400+i), "Serial Number": "N/A",
			"Temperature (Sensor edge) (C)":      fmt.Sprintf("%.1f", d.TemperatureCelsius),
			"Average Graphics Package Power (W)": fmt.Sprintf("%.1f", d.PowerWatts), "PCI Bus": busID(i),
		}
		if hygon {
			c["Card Vendor"] = "Chengdu Haiguang IC Design Co., Ltd."
			c["DCU use (%)"] = fmt.Sprintf("%.0f", d.UtilizationPercent)
			c["vram Total Memory (MiB)"] = fmt.Sprint(p.MemoryMiB)
			c["vram Total Used Memory (MiB)"] = fmt.Sprint(d.MemoryUsedMiB)
			c[""] = ""
		} else {
			c["Card Vendor"] = "Advanced Micro Devices, Inc. [AMD/ATI]"
			c["GPU use (%)"] = fmt.Sprintf("%.0f", d.UtilizationPercent)
			c["VRAM Total Memory (B)"] = fmt.Sprint(p.MemoryMiB << 20)
			c["VRAM Total Used Memory (B)"] = fmt.Sprint(d.MemoryUsedMiB << 20)
		}
		out[fmt.Sprintf("card%d", p.id(i))] = c
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "    ")
	return enc.Encode(out)
}

func cnmon(w io.Writer, p *Profile, s *State) error {
	fmt.Fprintf(w, "+------------------------------------------------------------------------------+\n")
	fmt.Fprintf(w, "| CNMON v%-20s                                  Driver v%-9s |\n", driver(p, "5.10.22"), driver(p, "5.10.22"))
	fmt.Fprintf(w, "+-------------------------------+----------------------+-----------------------+\n")
	fmt.Fprintf(w, "| Card  VF  Name       Firmware |               Bus-Id | Util        Ecc-Error |\n")
	fmt.Fprintf(w, "| Fan   Temp      Pwr:Usage/Cap |         Memory-Usage | SR-IOV   Compute-Mode |\n")
	fmt.Fprintf(w, "|===============================+======================+=======================|\n")
	for i := 0; i < p.Count; i++ {
		d := s.dev(p.id(i))
		fmt.Fprintf(w, "| %-5d /   %-12s v1.1.6 | %20s | %-17s N/A |\n", p.id(i), p.Model, strings.ToUpper(busID(i)), fmt.Sprintf("%.0f%%", d.UtilizationPercent))
		fmt.Fprintf(w, "|  0%%   %2.0fC        %3.0f W/ 250 W | %5d MiB/ %5d MiB | N/A           Default |\n", d.TemperatureCelsius, d.PowerWatts, d.MemoryUsedMiB, p.MemoryMiB)
		fmt.Fprintf(w, "+-------------------------------+----------------------+-----------------------+\n")
	}
	_, err := fmt.Fprint(w, "\n+------------------------------------------------------------------------------+\n| Processes:                                                                   |\n|  No running processes found                                                  |\n+------------------------------------------------------------------------------+\n")
	return err
}

func xpuTable(w io.Writer, p *Profile, s *State) error {
	fmt.Fprintf(w, "Runtime Version: 4.31\nDriver Version: %s\n  DEVICES\n", driver(p, "4.0"))
	rule := strings.Repeat("-", 91)
	fmt.Fprintln(w, rule)
	fmt.Fprintln(w, "| DevID |   PCI Addr   | Model |   SN   |    INODE   | UseRate |    L3     |    Memory    |")
	fmt.Fprintln(w, rule)
	for i := 0; i < p.Count; i++ {
		d := s.dev(p.id(i))
		fmt.Fprintf(w, "| %5d | %s | %-5s | 02K%03d | /dev/xpu%-3d| %5.0f %% | 0 / 63 MB | %d / %d MB |\n", p.id(i), busID(i), p.Model, i, p.id(i), d.UtilizationPercent, d.MemoryUsedMiB, p.MemoryMiB)
	}
	fmt.Fprintln(w, rule)
	_, err := fmt.Fprint(w, "  PROCESSES\n-------------------------------------------------\n| DevID | PID | Streams | L3 | Memory | Command |\n-------------------------------------------------\n-------------------------------------------------\n")
	return err
}

// xpuMachine prints `xpu-smi -m` rows in the column positions the parser
// reads (see xpusmireceiver/parse_machine.go): 32 fields per row.
func xpuMachine(w io.Writer, p *Profile, s *State) error {
	for i := 0; i < p.Count; i++ {
		d := s.dev(p.id(i))
		f := make([]string, 21)
		for j := range f {
			f[j] = "0"
		}
		f[0], f[1] = busID(i), fmt.Sprint(p.id(i))
		f[4], f[8] = fmt.Sprintf("%.0f", d.TemperatureCelsius), fmt.Sprintf("%.1f", d.PowerWatts)
		f[17], f[18], f[19] = fmt.Sprint(d.MemoryUsedMiB), fmt.Sprint(p.MemoryMiB), fmt.Sprintf("%.0f", d.UtilizationPercent)
		name := strings.Fields(p.Model)
		if len(name) == 1 {
			name = append(name, "PCIe")
		}
		row := append(f, "("+name[0], name[1]+")", "0", "0", "0", "0", "0", "0", "0", "0", "0")
		fmt.Fprintln(w, strings.Join(row[:32], " "))
	}
	return nil
}

func mthreadsTable(w io.Writer, p *Profile, s *State) error {
	rule := strings.Repeat("-", 63)
	fmt.Fprintf(w, "%s\n    mthreads-gmi:1.14.0          Driver Version:%s\n%s\n", rule, driver(p, "2.7.0"), rule)
	io.WriteString(w, "ID   Name           |PCIe                |%GPU  Mem\n     Device Type    |Pcie Lane Width     |Temp  MPC Capable\n                                         |      ECC Mode\n+-------------------------------------------------------------+\n")
	for i := 0; i < p.Count; i++ {
		d := s.dev(p.id(i))
		fmt.Fprintf(w, "%-4d %-14s |0000%-16s|%-5s %dMiB(%dMiB)\n", p.id(i), p.Model, strings.ToUpper(busID(i)), fmt.Sprintf("%.0f%%", d.UtilizationPercent), d.MemoryUsedMiB, p.MemoryMiB)
		fmt.Fprintf(w, "     Physical       |16x(16x)            |%-5s YES\n                                         |      N/A\n%s\n", fmt.Sprintf("%.0fC", d.TemperatureCelsius), rule)
	}
	return nil
}

func ixsmiTable(w io.Writer, p *Profile, s *State) error {
	fmt.Fprint(w, "+-----------------------------------------------------------------------------+\n")
	fmt.Fprintf(w, "|  IX-ML: %-10s Driver Version: %-10s CUDA Version: 10.2          |\n", driver(p, "4.1.0"), driver(p, "4.1.0"))
	fmt.Fprint(w, "|-------------------------------+----------------------+----------------------|\n| GPU  Name                     | Bus-Id               | Clock-SM  Clock-Mem  |\n| Fan  Temp  Perf  Pwr:Usage/Cap|      Memory-Usage    | GPU-Util  Compute M. |\n|===============================+======================+======================|\n")
	for i := 0; i < p.Count; i++ {
		d := s.dev(p.id(i))
		fmt.Fprintf(w, "| %-4d %-24s | 0000%-16s | 1500MHz   1600MHz    |\n", p.id(i), p.Model, strings.ToUpper(busID(i)))
		fmt.Fprintf(w, "| 0%%   %2.0fC   P0    %3.0fW / 350W  | %-20s | %-9s Default    |\n", d.TemperatureCelsius, d.PowerWatts,
			fmt.Sprintf("%dMiB / %dMiB", d.MemoryUsedMiB, p.MemoryMiB), fmt.Sprintf("%.0f%%", d.UtilizationPercent))
		fmt.Fprint(w, "+-------------------------------+----------------------+----------------------+\n")
	}
	return nil
}

func mxsmiTable(w io.Writer, p *Profile, s *State) error {
	fmt.Fprintf(w, "mx-smi  version: 2.1.6\n\n=================== MetaX System Management Interface Log ===================\nAttached GPUs                                     : %d\n", p.Count)
	fmt.Fprint(w, "+---------------------------------------------------------------------------------+\n")
	fmt.Fprintf(w, "| MX-SMI 2.1.6                        Kernel Mode Driver Version: %-13s |\n", driver(p, "2.5.014"))
	fmt.Fprint(w, "|------------------------------------+---------------------+----------------------+\n| GPU         NAME                   | Bus-id              | GPU-Util             |\n| Temp        Power                  | Memory-Usage        |                      |\n|====================================+=====================+======================|\n")
	for i := 0; i < p.Count; i++ {
		d := s.dev(p.id(i))
		fmt.Fprintf(w, "| %-11d %-22s | %-19s | %-20s |\n", p.id(i), p.Model, busID(i), fmt.Sprintf("%.0f%%", d.UtilizationPercent))
		fmt.Fprintf(w, "| %-11s %-22s | %-19s |                      |\n", fmt.Sprintf("%.0fC", d.TemperatureCelsius), fmt.Sprintf("%.0fW", d.PowerWatts), fmt.Sprintf("%d/%d MiB", d.MemoryUsedMiB, p.MemoryMiB))
		fmt.Fprint(w, "+------------------------------------+---------------------+----------------------+\n")
	}
	return nil
}

// efsmiTable prints efsmi, which shows total memory only.
func efsmiTable(w io.Writer, p *Profile, s *State) error {
	fmt.Fprint(w, "------------------- Enflame System Management Interface --------------------\n\n")
	fmt.Fprintf(w, "|EFSMI    V%-15s Driver Ver: %-15s                   |\n", driver(p, "1.2.0.301"), driver(p, "1.2.0.301"))
	fmt.Fprint(w, "|--------------------------------------------------------------------------|\n| DEV    NAME                | FW VER          | BUS-ID      ECC           |\n| TEMP   Dpm   Pwr(Usage/Cap)| Mem     GCU Virt| DUsed       SN            |\n|--------------------------------------------------------------------------|\n")
	for i := 0; i < p.Count; i++ {
		d := s.dev(p.id(i))
		fmt.Fprintf(w, "| %-6d %-19s | 33.6.5          | %s  Enable        |\n", p.id(i), p.Model, busID(i)[5:])
		fmt.Fprintf(w, "| %2.0f C   Active   %3.0fW  300W | %dMiB Disable| %5.1f%%      A07364051%04d |\n", d.TemperatureCelsius, d.PowerWatts, p.MemoryMiB, d.UtilizationPercent, i)
		fmt.Fprint(w, "+--------------------------------------------------------------------------+\n")
	}
	return nil
}
