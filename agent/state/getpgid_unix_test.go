//go:build unix

package state

import "syscall"

func syscallGetpgid(pid int) (int, error) { return syscall.Getpgid(pid) }
