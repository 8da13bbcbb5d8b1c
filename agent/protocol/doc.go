// Package protocol holds the JSON wire types exchanged between the node agent
// (agent/...) and the server (controlplane/agentapi). It imports nothing but
// the inventory model, so both sides can depend on it without cycles.
package protocol
