package runner

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/heteroflow/heteroflow/agent/protocol"
	"github.com/heteroflow/heteroflow/receivers/vendorcatalog"
)

// Every vendor's selection knobs (visible-device variables, which id they
// take, /dev nodes) come from the vendor catalog (receivers/vendorcatalog).

// DeviceID is the id that names d in its vendor's visible-device variables.
func DeviceID(d protocol.DeviceSlice) string {
	e, _ := vendorcatalog.Lookup(d.Vendor)
	switch e.DeviceID {
	case vendorcatalog.IDUUID:
		return uuidOrIndex(d)
	case vendorcatalog.IDPartitionOrIndex:
		return partitionOrIndex(d)
	}
	return strconv.Itoa(d.Index)
}

func uuidOrIndex(d protocol.DeviceSlice) string {
	switch {
	case d.PartitionUUID != "":
		return d.PartitionUUID
	case d.UUID != "":
		return d.UUID
	}
	return strconv.Itoa(d.Index)
}

func partitionOrIndex(d protocol.DeviceSlice) string {
	if d.PartitionID != "" {
		return d.PartitionID
	}
	return strconv.Itoa(d.Index)
}

func physicalID(d protocol.DeviceSlice) int {
	if d.Card != nil {
		return *d.Card
	}
	return d.Index
}

// deviceNode expands the catalog's per-device node template for d.
func deviceNode(tmpl string, d protocol.DeviceSlice) string {
	r := strings.NewReplacer("{card}", strconv.Itoa(physicalID(d)), "{index}", strconv.Itoa(d.Index))
	return r.Replace(tmpl)
}

// VisibilityEnv returns the device-selection variables for devices. In
// container mode it returns the runtime-hook variables instead of the
// process ones: inside a container the devices are renumbered from 0, so a
// host index would point at the wrong device.
func VisibilityEnv(devices []protocol.DeviceSlice, container bool) (map[string]string, error) {
	lists := map[string][]string{}
	owner := map[string]string{}
	for _, d := range devices {
		v, ok := vendorcatalog.Lookup(d.Vendor)
		if !ok {
			return nil, fmt.Errorf("unknown vendor %q", d.Vendor)
		}
		name := v.VisibleVar(container)
		if name == "" {
			if container {
				continue // device nodes alone select the devices (ContainerArgs)
			}
			return nil, fmt.Errorf("vendor %s has no process-level device-selection variable; run the task with an image", d.Vendor)
		}
		if prev, ok := owner[name]; ok && prev != d.Vendor {
			// Iluvatar/MetaX reuse CUDA_VISIBLE_DEVICES: one task cannot mix them with NVIDIA.
			return nil, fmt.Errorf("vendors %s and %s both select devices with %s; one task cannot use both", prev, d.Vendor, name)
		}
		owner[name] = d.Vendor
		lists[name] = append(lists[name], DeviceID(d))
	}
	env := make(map[string]string, len(lists))
	for k, ids := range lists {
		env[k] = strings.Join(ids, ",")
	}
	return env, nil
}

// DeviceNodes lists the /dev entries a container needs for devices, sorted
// and without duplicates.
func DeviceNodes(devices []protocol.DeviceSlice) []string {
	seen := map[string]bool{}
	for _, d := range devices {
		v, _ := vendorcatalog.Lookup(d.Vendor)
		if v.DeviceNode != "" {
			seen[deviceNode(v.DeviceNode, d)] = true
		}
		for _, n := range v.ControlNodes {
			seen[n] = true
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
