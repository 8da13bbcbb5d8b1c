package agentapi

import (
	"net/http"

	"github.com/heteroflow/heteroflow/agent/protocol"
	"github.com/heteroflow/heteroflow/controlplane/httpapi"
)

// assignAnswer is what a manual assignment answers.
type assignAnswer struct {
	ID      int64  `json:"id"`
	State   string `json:"state"`
	NodeID  string `json:"node_id"`
	Attempt int    `json:"attempt"`
}

// nodeConfig is a JSON object of agent settings pushed to a node.
type nodeConfig map[string]any

// document puts the agent, node and bootstrap-token routes in the OpenAPI
// document; the handlers' bodies are the protocol package's types and the
// JSON views in this package.
func document(api *httpapi.API) {
	p := httpapi.Prefix
	paging := []string{"limit", "offset"}
	tokens, agents, nodes := []string{"bootstrap tokens"}, []string{"agents"}, []string{"nodes"}
	api.Document(http.MethodPost, p+"/bootstrap-tokens", httpapi.Doc{ID: "create-bootstrap-token", Summary: "Create a single-use node enrolment token (the secret is shown once)",
		Tags: tokens, Request: tokenRequest{}, Response: tokenJSON{}, Status: http.StatusCreated})
	api.Document(http.MethodGet, p+"/bootstrap-tokens", httpapi.Doc{ID: "list-bootstrap-tokens", Summary: "List enrolment tokens (without secrets)",
		Tags: tokens, Query: paging, Response: list[tokenJSON]{}})
	api.Document(http.MethodDelete, p+"/bootstrap-tokens/{id}", httpapi.Doc{ID: "delete-bootstrap-token", Summary: "Revoke an enrolment token",
		Tags: tokens, Status: http.StatusNoContent, Errors: []int{404}})

	api.Document(http.MethodPost, p+"/agents/enroll", httpapi.Doc{ID: "enroll-agent", Summary: "Enrol a node with a bootstrap token; answers its API key (and certificate under mTLS)",
		Tags: agents, Request: protocol.EnrollRequest{}, Response: protocol.EnrollResponse{}, Status: http.StatusCreated, Errors: []int{401, 409}})
	api.Document(http.MethodPost, p+"/agents/heartbeat", httpapi.Doc{ID: "agent-heartbeat", Summary: "A node's heartbeat with its inventory and running tasks",
		Tags: agents, Request: protocol.Heartbeat{}, Response: protocol.HeartbeatResponse{}})
	api.Document(http.MethodGet, p+"/agents/assignments", httpapi.Doc{ID: "agent-assignments", Summary: "Long-poll for the node's assignments (?wait=30s)",
		Tags: agents, Query: []string{"wait"}, Response: protocol.AssignmentList{}})
	api.Document(http.MethodPost, p+"/agents/status", httpapi.Doc{ID: "agent-status", Summary: "Report task state changes (idempotent by sequence number)",
		Tags: agents, Request: protocol.StatusBatch{}, Response: protocol.StatusAck{}})
	api.Document(http.MethodPost, p+"/agents/logs", httpapi.Doc{ID: "agent-logs-upload", Summary: "Ship task output chunks",
		Tags: agents, Request: protocol.LogBatch{}, Status: http.StatusNoContent})

	api.Document(http.MethodPost, p+"/agents/certificate", httpapi.Doc{ID: "renew-agent-certificate", Summary: "Sign a new client certificate for the calling node (renewal; the old one stays valid until it expires)",
		Tags: agents, Request: protocol.CertRenewRequest{}, Response: protocol.CertRenewResponse{}, Errors: []int{401}})
	api.Document(http.MethodPost, p+"/nodes/{id}/revoke", httpapi.Doc{ID: "revoke-node", Summary: "Revoke a node: its agent key and certificate are refused from its next request, its long-poll ends; the node is cordoned",
		Tags: nodes, Response: nodeJSON{}, Errors: []int{404}})
	api.Document(http.MethodGet, p+"/nodes", httpapi.Doc{ID: "list-nodes", Summary: "List nodes",
		Tags: nodes, Query: append([]string{"state", "vendor", "q"}, paging...), Response: list[nodeJSON]{}})
	api.Document(http.MethodGet, p+"/nodes/{id}", httpapi.Doc{ID: "get-node", Summary: "A node with its devices", Tags: nodes, Response: nodeJSON{}, Errors: []int{404}})
	for _, op := range []string{"cordon", "uncordon", "drain"} {
		api.Document(http.MethodPost, p+"/nodes/{id}/"+op, httpapi.Doc{ID: op + "-node", Summary: op + " a node",
			Tags: nodes, Response: nodeJSON{}, Errors: []int{404}})
	}
	manage := func(path, id, summary string, req any) {
		api.Document(http.MethodPost, p+"/nodes/{id}/"+path, httpapi.Doc{ID: id, Summary: summary + " (?wait=10s waits for the agent's answer: 200, else 202)",
			Tags: nodes, Query: []string{"wait"}, Request: req, Response: managementJSON{}, Errors: []int{404}})
	}
	manage("config", "configure-node-agent", "Push settings to a node's agent", nodeConfig{})
	manage("agent-logs", "request-agent-logs", "Ask a node's agent for its recent log", nil)
	manage("agent-status", "request-agent-status", "Ask a node's agent for its status", nil)
	api.Document(http.MethodGet, p+"/nodes/{id}/management/{mid}", httpapi.Doc{ID: "get-node-management", Summary: "A management command's state and answer",
		Tags: nodes, Response: managementJSON{}, Errors: []int{404}})
	api.Document(http.MethodPost, p+"/tasks/{id}/assign", httpapi.Doc{ID: "assign-task", Summary: "Place a pending task on a node by hand",
		Tags: []string{"tasks"}, Request: assignRequest{}, Response: assignAnswer{}, Errors: []int{404, 409}})
	api.Document(http.MethodGet, p+"/tasks/{id}/logs", httpapi.Doc{ID: "get-task-logs", Summary: "A task's output from byte offset (?stream=stdout|stderr&attempt=N&offset=B)",
		Tags: []string{"tasks"}, Query: []string{"stream", "attempt", "offset"}, Response: taskLogJSON{}, Errors: []int{404}})
}
