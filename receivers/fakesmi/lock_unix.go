//go:build unix

package fakesmi

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive advisory lock on f (flock).
func lockFile(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_EX) }

func unlockFile(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
