package daemon

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"github.com/heteroflow/heteroflow/receivers/inventory"
	"github.com/heteroflow/heteroflow/receivers/rdma"
	"github.com/heteroflow/heteroflow/receivers/smi"
	"github.com/heteroflow/heteroflow/receivers/vendorcatalog"
)

// detect runs every vendor's CLI and keeps the vendors that answered with
// devices: mixed vendors on one node are all reported.
func detect(ctx context.Context, run smi.Runner, log *slog.Logger) []inventory.Snapshot {
	var out []inventory.Snapshot
	for _, v := range inventory.Vendors {
		snap, err := smi.Collect(ctx, v, run)
		if err != nil {
			if !smi.Unavailable(err) {
				log.Warn("vendor CLI failed", "vendor", v, "err", err)
			} else if e, ok := vendorcatalog.Lookup(v); ok {
				if nodes := e.PresentNodes("/"); len(nodes) > 0 {
					log.Warn("device nodes present but the vendor CLI is missing; these devices are not reported",
						"vendor", v, "nodes", nodes, "cli", e.CLIs[0].Name, "err", err)
				}
			}
			continue
		}
		if snap != nil && len(snap.Devices) > 0 {
			out = append(out, *snap)
		}
	}
	return out
}

// attachRDMA adds the node's InfiniBand / RoCE adapters (sysfs) to every
// snapshot with their affinity to its devices.
func attachRDMA(inv []inventory.Snapshot, log *slog.Logger) {
	devs, err := rdma.Detect("/")
	if err != nil {
		log.Warn("RDMA detection failed", "err", err)
		return
	}
	rdma.Attach("/", inv, devs)
}

// shape is what identifies an inventory change worth sending: devices,
// models, total memory and partitions — not the live figures.
func shape(inv []inventory.Snapshot) string {
	var parts []string
	for _, s := range inv {
		for _, d := range s.Devices {
			u := ""
			if d.UUID != nil {
				u = *d.UUID
			}
			var mem int64
			if d.MemoryTotalMiB != nil {
				mem = *d.MemoryTotalMiB
			}
			p, _ := json.Marshal(d.Partitions)
			parts = append(parts, s.Vendor+"/"+strconv.Itoa(d.Index)+"/"+u+"/"+d.Model+"/"+strconv.FormatInt(mem, 10)+"/"+string(p))
		}
		r, _ := json.Marshal(s.RDMA) // adapters and port states, not rates' live changes
		parts = append(parts, s.Vendor+"/rdma/"+string(r))
	}
	sort.Strings(parts)
	return strings.Join(parts, "\n")
}

func vendorsOf(inv []inventory.Snapshot) []string {
	var out []string
	for _, s := range inv {
		out = append(out, s.Vendor)
	}
	return out
}

// hostMemory returns total and available memory in MiB (Linux /proc/meminfo;
// zero elsewhere, reported as unknown).
func hostMemory() (total, free int64) {
	if runtime.GOOS != "linux" {
		return 0, 0
	}
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "MemTotal:":
			total = kb / 1024
		case "MemAvailable:":
			free = kb / 1024
		}
	}
	return total, free
}
