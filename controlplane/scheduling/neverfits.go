package scheduling

import (
	"context"
	"fmt"
	"strings"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/scheduler/model"
)

// ErrCodeNeverFits is the API error code of a task no node of the cluster
// could ever hold (the console translates it).
const ErrCodeNeverFits = "never_fits"

// capacity is what the largest fitting node of the cluster offers a task:
// the most devices of an admitted vendor/model on one node, and the
// largest device memory among them. Only whole-cluster capacity counts,
// never current use: a task that fits an empty cluster waits, one that
// does not would wait forever.
type capacity struct {
	nodes      int   // nodes with at least one admitted device
	maxDevices int   // most admitted devices on one node
	maxMemMiB  int64 // largest admitted device memory (0 = unknown)
	memKnown   bool
	devicesMem int // most admitted devices with enough memory on one node
}

func admitted(spec controlplane.TaskSpec, d *model.Device) bool {
	if spec.Vendor != "" && !strings.EqualFold(spec.Vendor, d.Vendor) {
		return false
	}
	if len(spec.Models) == 0 {
		return true
	}
	for _, m := range spec.Models {
		if strings.EqualFold(m, d.Model) {
			return true
		}
	}
	return false
}

func clusterCapacity(nodes []*model.NodeInfo, spec controlplane.TaskSpec) capacity {
	var c capacity
	for _, n := range nodes {
		count, withMem := 0, 0
		for i := range n.Node.Devices {
			d := &n.Node.Devices[i]
			if !admitted(spec, d) {
				continue
			}
			count++
			if d.MemoryMiB > 0 {
				c.memKnown = true
				c.maxMemMiB = max(c.maxMemMiB, d.MemoryMiB)
			}
			if spec.MemoryMiB <= 0 || d.MemoryMiB == 0 || int64(spec.MemoryMiB) <= d.MemoryMiB {
				withMem++
			}
		}
		if count > 0 {
			c.nodes++
		}
		c.maxDevices = max(c.maxDevices, count)
		c.devicesMem = max(c.devicesMem, withMem)
	}
	return c
}

// neverFits says why no node can ever hold spec, "" when one can (or the
// cluster has no accelerator node yet, or the request names models this
// check cannot judge: the scheduler's own filters explain those).
func neverFits(nodes []*model.NodeInfo, spec controlplane.TaskSpec) string {
	if spec.DeviceCount == 0 {
		return ""
	}
	any := controlplane.TaskSpec{}
	if clusterCapacity(nodes, any).nodes == 0 {
		return ""
	}
	c := clusterCapacity(nodes, spec)
	what := "devices"
	if spec.Vendor != "" || len(spec.Models) > 0 {
		what = strings.TrimSpace(spec.Vendor+" "+strings.Join(spec.Models, "/")) + " devices"
	}
	switch {
	case c.nodes == 0:
		if len(spec.Models) > 0 {
			return "" // model names are matched by the GPUType filter, which says so
		}
		return fmt.Sprintf("no node in the cluster has %s", what)
	case spec.DeviceCount > c.maxDevices:
		return fmt.Sprintf("it asks for %d %s on one node, the largest node has %d", spec.DeviceCount, what, c.maxDevices)
	case spec.MemoryMiB > 0 && c.memKnown && int64(spec.MemoryMiB) > c.maxMemMiB:
		return fmt.Sprintf("it asks for %d MiB per device, the largest of the cluster's %s has %d MiB", spec.MemoryMiB, what, c.maxMemMiB)
	case spec.DeviceCount > c.devicesMem:
		return fmt.Sprintf("it asks for %d %s with %d MiB each on one node, the most any node has is %d", spec.DeviceCount, what, spec.MemoryMiB, c.devicesMem)
	}
	return ""
}

// NeverFitsError refuses a task no node of the cluster could ever hold.
type NeverFitsError struct{ Why string }

func (e *NeverFitsError) Error() string {
	return "no node in the cluster can ever hold this task: " + e.Why +
		"; change the request, or set wait_for_nodes to queue it until such a node joins"
}

// AdmitTask refuses (with a *NeverFitsError) a task that no node of the
// cluster could ever hold; the API calls it at submit time unless the
// submitter asked to queue it for nodes still to come (wait_for_nodes).
//
// The verdict "fits" may come from the fleet as the leader's last node sync
// read it (normally within NodeSync; a view of an empty cluster is never
// used); a refusal is always confirmed on a fresh read, so a node that
// joined a moment ago is never missed.
func (s *Service) AdmitTask(ctx context.Context, spec controlplane.TaskSpec) error {
	nodes, err := s.fleetNodes(ctx, false)
	if err != nil {
		return err
	}
	if neverFits(nodes, spec) == "" {
		return nil
	}
	if nodes, err = s.fleetNodes(ctx, true); err != nil {
		return err
	}
	if why := neverFits(nodes, spec); why != "" {
		return &NeverFitsError{Why: why}
	}
	return nil
}
