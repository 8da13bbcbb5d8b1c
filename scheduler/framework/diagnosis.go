package framework

import (
	"fmt"
	"sort"
	"strings"

	"github.com/heteroflow/heteroflow/scheduler/model"
)

// NodeStatus is why one node was refused.
type NodeStatus struct {
	Node   string `json:"node"`
	Plugin string `json:"plugin"`
	Code   Code   `json:"-"`
	Reason string `json:"reason"`
}

// Diagnosis answers "why pending": every refused node with the plugin and
// reason that refused it, and the counts per reason.
type Diagnosis struct {
	Nodes    []NodeStatus   `json:"nodes"`
	ByReason map[string]int `json:"by_reason"`
	Total    int            `json:"total_nodes"`
}

// Summary is kube-style: "0/3 nodes are available: 2 insufficient cpu, 1 …".
func (d *Diagnosis) Summary() string {
	keys := make([]string, 0, len(d.ByReason))
	for k := range d.ByReason {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if d.ByReason[keys[i]] != d.ByReason[keys[j]] {
			return d.ByReason[keys[i]] > d.ByReason[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d %s", d.ByReason[k], k)
	}
	return fmt.Sprintf("0/%d nodes are available: %s", d.Total, strings.Join(parts, ", "))
}

// CandidateScore is one node's weighted score with each plugin's share.
type CandidateScore struct {
	Node   string             `json:"node"`
	Total  float64            `json:"total"`
	Scores map[string]float64 `json:"scores"` // plugin → raw score in [0,100]
}

// Decision is what Audit plugins receive for every cycle.
type Decision struct {
	Request    *model.Request   `json:"request"`
	Placement  *model.Placement `json:"placement,omitempty"`
	Status     string           `json:"status"`               // scheduled, waiting (held by Permit) or unschedulable
	Candidates []CandidateScore `json:"candidates,omitempty"` // winner first
	Diagnosis  *Diagnosis       `json:"diagnosis,omitempty"`
}
