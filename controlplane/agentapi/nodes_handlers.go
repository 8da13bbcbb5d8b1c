package agentapi

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/httpapi"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// nodeJSON is the node as the console and the CLI see it.
type nodeJSON struct {
	ID             string               `json:"id"`
	Hostname       string               `json:"hostname"`
	OS             string               `json:"os"`
	Arch           string               `json:"arch"`
	Version        string               `json:"version"`
	Labels         map[string]string    `json:"labels"`
	State          string               `json:"state"`
	Cordoned       bool                 `json:"cordoned"`
	Draining       bool                 `json:"draining"`
	Health         string               `json:"health"`
	CPUCount       int                  `json:"cpu_count"`
	MemoryTotalMiB int64                `json:"memory_total_mib"`
	MemoryFreeMiB  int64                `json:"memory_free_mib"`
	Vendors        []string             `json:"vendors"`
	DeviceCount    int                  `json:"device_count"`
	Inventory      []inventory.Snapshot `json:"inventory"`
	Running        json.RawMessage      `json:"running"`
	LastHeartbeat  *time.Time           `json:"last_heartbeat"`
	CreatedAt      time.Time            `json:"created_at"`
	UpdatedAt      time.Time            `json:"updated_at"`
}

func toNodeJSON(n *controlplane.Node) nodeJSON {
	out := nodeJSON{ID: n.ID, Hostname: n.Hostname, OS: n.OS, Arch: n.Arch, Version: n.Version, Labels: n.Labels,
		State: string(n.State), Cordoned: n.Cordoned, Draining: n.Draining, Health: n.Health, CPUCount: n.CPUCount,
		MemoryTotalMiB: n.MemoryTotalMiB, MemoryFreeMiB: n.MemoryFreeMiB, Vendors: []string{},
		Inventory: n.Inventory, Running: n.Running, LastHeartbeat: n.LastHeartbeat,
		CreatedAt: n.CreatedAt, UpdatedAt: n.UpdatedAt}
	if out.Labels == nil {
		out.Labels = map[string]string{}
	}
	if out.Inventory == nil {
		out.Inventory = []inventory.Snapshot{}
	}
	if len(out.Running) == 0 {
		out.Running = json.RawMessage("[]")
	}
	for _, s := range n.Inventory {
		if len(s.Devices) > 0 {
			out.Vendors = append(out.Vendors, s.Vendor)
			out.DeviceCount += len(s.Devices)
		}
	}
	return out
}

func (s *Service) listNodes(w http.ResponseWriter, r *http.Request) {
	pg, err := pageOf(r)
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	q := r.URL.Query()
	f := controlplane.NodeFilter{State: controlplane.NodeState(q.Get("state")), Vendor: q.Get("vendor"), Query: q.Get("q"), Page: pg}
	if f.State != "" && f.State != controlplane.NodeOnline && f.State != controlplane.NodeOffline {
		httpapi.WriteError(w, r, s.log, controlplane.Invalidf("state must be online or offline"))
		return
	}
	nodes, total, err := s.store.ListNodes(r.Context(), f)
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	out := list[nodeJSON]{Items: []nodeJSON{}, Total: total, Limit: pg.Limit, Offset: pg.Offset}
	for _, n := range nodes {
		out.Items = append(out.Items, toNodeJSON(n))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Service) getNode(w http.ResponseWriter, r *http.Request) {
	n, err := s.store.GetNode(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, toNodeJSON(n))
}

// schedulingOp sets the cordon/drain flags: cordon stops new placements,
// drain also asks the scheduler to move the node's work away, uncordon
// clears both.
func (s *Service) schedulingOp(op string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := chi.URLParam(r, "id")
		httpapi.SetAudit(r.Context(), "node."+op, "node/"+id)
		cordoned, draining := true, false
		switch op {
		case "drain":
			draining = true
		case "uncordon":
			cordoned = false
		}
		n, err := s.store.SetNodeScheduling(r.Context(), id, cordoned, draining)
		if err != nil {
			httpapi.WriteError(w, r, s.log, err)
			return
		}
		writeJSON(w, http.StatusOK, toNodeJSON(n))
	})
}
