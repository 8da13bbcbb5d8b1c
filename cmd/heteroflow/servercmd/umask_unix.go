//go:build unix

package servercmd

import "syscall"

// ownerOnlyFiles makes everything the server creates its own account's
// only (files 0600, directories 0700).
func ownerOnlyFiles() { syscall.Umask(0o077) }
