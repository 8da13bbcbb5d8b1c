package agentapi

import (
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/heteroflow/heteroflow/agent/protocol"
	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/httpapi"
)

// assignRequest is the body of POST /api/v1/tasks/{id}/assign: an explicit
// placement (operators, tests, and the scheduler's REST callers).
type assignRequest struct {
	NodeID  string                 `json:"node_id"`
	Devices []protocol.DeviceSlice `json:"devices"`
}

func (s *Service) assignHandler(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
	if err != nil {
		httpapi.WriteError(w, r, s.log, controlplane.Invalidf("task id must be an integer"))
		return
	}
	var req assignRequest
	if err := decode(r, &req); err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	if req.NodeID == "" {
		httpapi.WriteError(w, r, s.log, controlplane.Invalidf("node_id is required"))
		return
	}
	httpapi.SetAudit(r.Context(), "task.assign", "task/"+strconv.FormatInt(id, 10))
	t, err := s.Assign(r.Context(), id, req.NodeID, req.Devices)
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": t.ID, "state": t.State, "node_id": t.NodeID, "attempt": t.Attempt})
}
