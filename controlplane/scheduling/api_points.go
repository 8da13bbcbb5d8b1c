package scheduling

import (
	"log/slog"

	"github.com/heteroflow/heteroflow/scheduler/framework"
	"github.com/heteroflow/heteroflow/scheduler/model"
)

// extensionPoints names the points a registered plugin implements, by
// building it over an empty cluster (plugins are cheap to build).
func extensionPoints(reg framework.Registry, name string) []string {
	f, ok := reg[name]
	if !ok {
		return nil
	}
	sn := mustSnapshot(1)
	pl, err := f(framework.Args{}, handleOf{sn})
	if err != nil {
		return nil
	}
	var out []string
	add := func(ok bool, n string) {
		if ok {
			out = append(out, n)
		}
	}
	_, a := pl.(framework.PreFilterPlugin)
	add(a, "PreFilter")
	_, a = pl.(framework.FilterPlugin)
	add(a, "Filter")
	_, a = pl.(framework.AssignPlugin)
	add(a, "Assign")
	_, a = pl.(framework.PreScorePlugin)
	add(a, "PreScore")
	_, a = pl.(framework.ScorePlugin)
	add(a, "Score")
	_, a = pl.(framework.ReservePlugin)
	add(a, "Reserve")
	_, a = pl.(framework.PermitPlugin)
	add(a, "Permit")
	_, a = pl.(framework.PostFilterPlugin)
	add(a, "PostFilter")
	_, a = pl.(framework.AuditPlugin)
	add(a, "Audit")
	return out
}

// handleOf is a framework.Handle over a snapshot (for building plugins
// outside the loop).
type handleOf struct{ s *snapshot }

func (h handleOf) Cluster() *model.Cluster { return h.s.cl }
func (handleOf) Logger() *slog.Logger      { return slog.New(slog.DiscardHandler) }
func (handleOf) Invalidate()               {}
