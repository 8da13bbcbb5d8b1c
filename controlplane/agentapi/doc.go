// Package agentapi is the server side of the node agent: bootstrap tokens,
// enrollment, heartbeats (online/offline and node up/down metrics),
// assignments by long-poll, status updates from the agents' outboxes
// (applied exactly once by sequence number), task log chunks, the node API
// (list, get, cordon, uncordon, drain) and remote management (config push,
// agent log collection, agent status), delivered on the same long-poll
// channel.
//
// Long-poll: every node has an in-process notifier (a 1-buffered channel).
// Assign, cancel and management requests store the item and poke the
// node's channel, so a waiting poll answers at once without polling the
// database. A poll that wakes reads the node's open assignments once.
//
// Who may call what: agent endpoints need an API key bound to a node
// (role agent, permission nodes:write); bootstrap tokens are admin-only
// (settings permissions, since a token mints node credentials); node
// management needs nodes:write and is refused to agent keys.
//
// Cancels issued elsewhere (the task API) reach agents through a sweeper
// that asks the store once a second for run assignments whose task the
// ledger no longer wants running (RunsToStop) and queues cancel items; the
// heartbeat answer also lists the tasks the server expects on the node so
// the agent can stop anything else.
package agentapi
