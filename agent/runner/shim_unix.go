//go:build unix

package runner

import (
	"os"
	"os/exec"
	"syscall"
)

// setCredential makes the task run as the spec's account (the shim runs as
// the agent's user, root when it may switch).
func setCredential(cmd *exec.Cmd, spec shimSpec) {
	if !spec.Switch {
		return
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Credential = &syscall.Credential{Uid: spec.UID, Gid: spec.GID, Groups: append([]uint32{}, spec.Groups...)}
}

// detach starts the shim in a session of its own: signals to the agent's
// process group (Ctrl-C, a service manager's SIGTERM) do not reach it.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}

// openNoFollow opens a file the task controls: not through a final
// symbolic link, and without blocking on a FIFO.
const openNoFollow = syscall.O_NOFOLLOW | syscall.O_NONBLOCK

// canTraverse reports whether id has search (x) permission on st.
func canTraverse(st os.FileInfo, id Identity) bool {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return true
	}
	perm := st.Mode().Perm()
	switch {
	case sys.Uid == id.UID:
		return perm&0o100 != 0
	case sys.Gid == id.GID || containsGID(id.Groups, sys.Gid):
		return perm&0o010 != 0
	}
	return perm&0o001 != 0
}
