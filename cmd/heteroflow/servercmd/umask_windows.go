//go:build windows

package servercmd

// ownerOnlyFiles: Windows has no umask; the data folder's ACL, inherited
// from where it is created, governs access.
func ownerOnlyFiles() {}
