// Package procgroup starts a command in its own process group and signals
// the whole group, so that a task's children die with it. Unix uses
// setpgid and kill(-pgid); Windows uses a new process group and
// `taskkill /T` (tree kill), selected by build tags.
package procgroup
