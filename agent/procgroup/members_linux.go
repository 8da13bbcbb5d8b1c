//go:build linux

package procgroup

import (
	"os"
	"strconv"
	"strings"
)

// Members lists the non-zombie processes whose process group is pgid.
func Members(pgid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	want := strconv.Itoa(pgid)
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:]) // f[0]=state, f[1]=ppid, f[2]=pgrp
		if len(f) > 2 && f[2] == want && f[0] != "Z" && f[0] != "X" {
			out = append(out, pid)
		}
	}
	return out
}

func hasLiveMember(pgid int) bool { return len(Members(pgid)) > 0 }
