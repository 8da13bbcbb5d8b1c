package agentapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/heteroflow/heteroflow/agent/protocol"
	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/httpapi"
)

const (
	manageConfig = protocol.ManageConfig
	manageLogs   = protocol.ManageLogs
	manageStatus = protocol.ManageStatus
)

// managementJSON reports a management command and, once the agent
// answered, its result.
type managementJSON struct {
	ID        int64           `json:"id"`
	NodeID    string          `json:"node_id"`
	Command   string          `json:"command"`
	Done      bool            `json:"done"`
	Result    json.RawMessage `json:"result"`
	CreatedAt time.Time       `json:"created_at"`
}

func toManagementJSON(a *controlplane.Assignment) managementJSON {
	var m protocol.Management
	_ = json.Unmarshal(a.Payload, &m) // written by us; a bad row shows an empty command
	out := managementJSON{ID: a.ID, NodeID: a.NodeID, Command: m.Command, Done: a.DoneAt != nil,
		Result: a.Result, CreatedAt: a.CreatedAt}
	if len(out.Result) == 0 {
		out.Result = json.RawMessage("null")
	}
	return out
}

// manageWait is how long a management call waits for the agent's answer
// before returning 202 with the command to poll.
const manageWait = 10 * time.Second

// manageHandler queues a management command on the node's long-poll channel
// and waits for the answer (?wait=, default 10 s): 200 with the result, or
// 202 with the id to GET later from /nodes/{id}/management/{mid}. Every
// command is a POST: it queues work on the node, so it is not a safe GET.
func (s *Service) manageHandler(cmd string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := chi.URLParam(r, "id")
		m := protocol.Management{Command: cmd}
		if cmd == manageConfig {
			var cfg json.RawMessage
			if err := decode(r, &cfg); err != nil {
				httpapi.WriteError(w, r, s.log, err)
				return
			}
			var obj map[string]any
			if err := json.Unmarshal(cfg, &obj); err != nil {
				httpapi.WriteError(w, r, s.log, controlplane.Invalidf("config must be a JSON object"))
				return
			}
			m.Config = cfg
		}
		// node.config, node.agent-logs, node.agent-status: every command an
		// operator sends to an agent is in the audit log.
		httpapi.SetAudit(r.Context(), "node."+cmd, "node/"+id)
		wait := manageWait
		if v := r.URL.Query().Get("wait"); v != "" {
			d, err := parseWait(v, s.opts.MaxWait)
			if err != nil {
				httpapi.WriteError(w, r, s.log, err)
				return
			}
			wait = d
		}
		if _, err := s.store.GetNode(r.Context(), id); err != nil {
			httpapi.WriteError(w, r, s.log, err)
			return
		}
		payload, err := json.Marshal(m)
		if err != nil {
			httpapi.WriteError(w, r, s.log, err)
			return
		}
		a := &controlplane.Assignment{NodeID: id, Kind: controlplane.AssignManage, Payload: payload}
		if err := s.store.CreateAssignment(r.Context(), a); err != nil {
			httpapi.WriteError(w, r, s.log, err)
			return
		}
		s.notify.Notify(id)
		done, err := s.awaitManagement(r, a.ID, wait)
		if err != nil {
			httpapi.WriteError(w, r, s.log, err)
			return
		}
		status := http.StatusOK
		if done.DoneAt == nil {
			status = http.StatusAccepted
		}
		writeJSON(w, status, toManagementJSON(done))
	})
}

// awaitManagement polls the one assignment row until the agent answered.
// This is a per-request wait on a human action, not the agents' hot path.
func (s *Service) awaitManagement(r *http.Request, id int64, wait time.Duration) (*controlplane.Assignment, error) {
	deadline := time.Now().Add(wait)
	for {
		a, err := s.store.GetAssignment(r.Context(), id)
		if err != nil || a.DoneAt != nil || !time.Now().Before(deadline) {
			return a, err
		}
		select {
		case <-r.Context().Done():
			return nil, r.Context().Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (s *Service) getManagement(w http.ResponseWriter, r *http.Request) {
	mid, err := strconv.ParseInt(chi.URLParam(r, "mid"), 10, 64)
	if err != nil {
		httpapi.WriteError(w, r, s.log, controlplane.Invalidf("management id must be an integer"))
		return
	}
	a, err := s.store.GetAssignment(r.Context(), mid)
	if err == nil && (a.NodeID != chi.URLParam(r, "id") || a.Kind != controlplane.AssignManage) {
		err = controlplane.ErrNotFound
	}
	if err != nil {
		if errors.Is(err, controlplane.ErrNotFound) {
			err = errors.Join(controlplane.ErrNotFound, errors.New("no such management command on this node"))
		}
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, toManagementJSON(a))
}
