//go:build unix

package procgroup

import (
	"errors"
	"os/exec"
	"syscall"
)

// Prepare makes cmd the leader of a new process group (pgid = its pid).
func Prepare(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

// Terminate asks every process of group pgid to stop (SIGTERM).
func Terminate(pgid int) error { return signal(pgid, syscall.SIGTERM) }

// Kill kills every process of group pgid (SIGKILL).
func Kill(pgid int) error { return signal(pgid, syscall.SIGKILL) }

// Alive reports whether any process of group pgid still runs. Zombies do
// not count: where PID 1 does not reap, killed children linger as zombies.
func Alive(pgid int) bool {
	if pgid <= 0 || syscall.Kill(-pgid, 0) != nil {
		return false
	}
	return hasLiveMember(pgid)
}

func signal(pgid int, sig syscall.Signal) error {
	if pgid <= 1 {
		return errors.New("refusing to signal process group ≤ 1")
	}
	err := syscall.Kill(-pgid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil // already gone
	}
	return err
}

func processExists(pid int) bool { return syscall.Kill(pid, 0) == nil }
