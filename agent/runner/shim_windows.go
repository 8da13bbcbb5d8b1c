//go:build windows

package runner

import (
	"os"
	"os/exec"

	"github.com/heteroflow/heteroflow/agent/procgroup"
)

// setCredential: Windows agents run tasks as the agent's own account.
func setCredential(*exec.Cmd, shimSpec) {}

// detach starts the shim in a new process group.
func detach(cmd *exec.Cmd) { procgroup.Prepare(cmd) }

// openNoFollow: no such flags on Windows.
const openNoFollow = 0

func canTraverse(os.FileInfo, Identity) bool { return true }
