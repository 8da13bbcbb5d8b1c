package main

import "strings"

// splitServers is $HETEROFLOW_SERVER as a list (comma separated), the
// default of the repeatable --server flag.
func splitServers(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
