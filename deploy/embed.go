// Package deploy holds the deployment files; Go code only embeds the agent
// install script so the server can serve it on the console port.
package deploy

import _ "embed"

// AgentScript is deploy-agent-all-in-one.sh, served at
// GET /deploy-agent-all-in-one.sh.
//
//go:embed deploy-agent-all-in-one.sh
var AgentScript []byte
