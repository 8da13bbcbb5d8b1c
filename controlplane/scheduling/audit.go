package scheduling

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/scheduler/framework"
	"github.com/heteroflow/heteroflow/scheduler/model"
)

// decisionDetail is the JSON an entry's detail carries.
type decisionDetail struct {
	Node   string             `json:"node,omitempty"`
	Slices []model.Slice      `json:"slices,omitempty"`
	Score  float64            `json:"score,omitempty"`  // the winner's weighted total
	Scores map[string]float64 `json:"scores,omitempty"` // plugin → its raw score for the winner
	Why    string             `json:"why,omitempty"`
}

// auditDecision is the Audit plugin's sink in the live cluster: every
// placement (node, slices, the winner's total and each plugin's score)
// and the first unschedulable cycle of each task go to the audit log; the
// retries of a waiting task would only repeat it (the current reason is
// served by "why pending"). It runs inside Schedule, under s.mu.
func (s *Service) auditDecision(_ context.Context, d *framework.Decision) {
	id, err := strconv.ParseInt(d.Request.ID, 10, 64)
	if err != nil {
		return
	}
	e := &controlplane.AuditEntry{Actor: "scheduler", Module: controlplane.ModuleScheduler, Level: controlplane.LevelInfo,
		Action: "task." + d.Status, Target: "task/" + d.Request.ID, Result: d.Status}
	var det decisionDetail
	switch {
	case d.Placement != nil:
		det.Node, det.Slices = d.Placement.Node, d.Placement.Slices
		if len(d.Candidates) > 0 {
			det.Score, det.Scores = d.Candidates[0].Total, d.Candidates[0].Scores
			for plugin, score := range det.Scores {
				s.m.pluginScore.WithLabelValues(plugin).Observe(score)
			}
		}
	case s.attempts[id] > 0:
		return // already recorded this task's first unschedulable cycle
	default:
		e.Level = controlplane.LevelWarn
		if d.Diagnosis != nil {
			det.Why = d.Diagnosis.Summary()
		}
	}
	b, err := json.Marshal(det)
	if err != nil {
		return
	}
	e.Detail = string(b)
	s.audit(e)
}
