//go:build windows

package procgroup

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// createNewProcessGroup is CREATE_NEW_PROCESS_GROUP from the Windows API.
const createNewProcessGroup = 0x00000200

// Prepare starts cmd in a new process group.
func Prepare(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.CreationFlags |= createNewProcessGroup
}

// Terminate asks the process tree rooted at pid to stop.
func Terminate(pid int) error { return taskkill(pid, false) }

// Kill force-kills the process tree rooted at pid.
func Kill(pid int) error { return taskkill(pid, true) }

// Alive reports whether process pid still exists.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	p, err := os.FindProcess(pid) // opens a handle on Windows: fails when gone
	if err != nil {
		return false
	}
	p.Release()
	return true
}

func taskkill(pid int, force bool) error {
	if pid <= 0 {
		return errors.New("invalid pid")
	}
	args := []string{"/T", "/PID", strconv.Itoa(pid)}
	if force {
		args = append([]string{"/F"}, args...)
	}
	return exec.Command("taskkill", args...).Run()
}

func processExists(pid int) bool { return Alive(pid) }
