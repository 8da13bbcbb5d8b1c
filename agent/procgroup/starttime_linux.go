//go:build linux

package procgroup

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// StartTime returns the process start time in clock ticks since boot
// (field 22 of /proc/PID/stat). Together with the pid it identifies a
// process across pid reuse, so a restarted agent never kills a stranger.
func StartTime(pid int) (uint64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// comm (field 2) may contain spaces and parentheses: split after the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	fields := strings.Fields(s[i+1:])
	// fields[0] is field 3 (state); field 22 is fields[19].
	if len(fields) < 20 {
		return 0, fmt.Errorf("short /proc/%d/stat", pid)
	}
	return strconv.ParseUint(fields[19], 10, 64)
}

// Running reports whether process pid runs (not a zombie) and, when start
// is not 0, is the process that started at start (not a reused pid).
func Running(pid int, start uint64) bool {
	if pid <= 0 {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 || f[0] == "Z" || f[0] == "X" {
		return false
	}
	if start == 0 {
		return true
	}
	st, err := strconv.ParseUint(f[19], 10, 64)
	return err == nil && st == start
}
