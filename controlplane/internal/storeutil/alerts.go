package storeutil

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
)

// Args collects query arguments and renders each dialect's placeholder
// (SQLite "?", PostgreSQL "$n"), so filters are written once.
type Args struct {
	Numbered bool                // PostgreSQL
	Time     func(time.Time) any // how the dialect stores a time
	Vals     []any
}

// Add appends v and returns its placeholder.
func (a *Args) Add(v any) string {
	a.Vals = append(a.Vals, v)
	if a.Numbered {
		return fmt.Sprintf("$%d", len(a.Vals))
	}
	return "?"
}

// AddTime appends a time in the dialect's form.
func (a *Args) AddTime(t time.Time) string { return a.Add(a.Time(t)) }

// AlertWhere renders f's conditions ("" when none) over the alerts table.
func AlertWhere(f controlplane.AlertFilter, a *Args) string {
	var conds []string
	in := func(col string, vals []string) {
		if len(vals) == 0 {
			return
		}
		ph := make([]string, len(vals))
		for i, v := range vals {
			ph[i] = a.Add(v)
		}
		conds = append(conds, col+" IN ("+strings.Join(ph, ", ")+")")
	}
	states := make([]string, len(f.States))
	for i, s := range f.States {
		states[i] = string(s)
	}
	in("state", states)
	levels := make([]string, len(f.Levels))
	for i, l := range f.Levels {
		levels[i] = string(l)
	}
	in("level", levels)
	if f.Rule != "" {
		conds = append(conds, "rule = "+a.Add(f.Rule))
	}
	if f.Node != "" {
		conds = append(conds, "node = "+a.Add(f.Node))
	}
	if f.Tenant != nil {
		conds = append(conds, "tenant = "+a.Add(*f.Tenant))
	}
	if f.Scope != nil {
		conds = append(conds, alertScopeWhere(f.Scope, a))
	}
	if f.Since != nil {
		conds = append(conds, "fired_at >= "+a.AddTime(*f.Since))
	}
	if f.Until != nil {
		conds = append(conds, "fired_at < "+a.AddTime(*f.Until))
	}
	if len(conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(conds, " AND ")
}

// CheckAlertFilter rejects unknown states and levels.
func CheckAlertFilter(f controlplane.AlertFilter) error {
	for _, s := range f.States {
		if !s.Valid() {
			return controlplane.Invalidf("unknown alert state %q", s)
		}
	}
	for _, l := range f.Levels {
		if !l.Valid() {
			return controlplane.Invalidf("unknown alert level %q", l)
		}
	}
	return nil
}

// JSONText marshals a map or slice for a JSON text column ("{}"/"[]" for nil).
func JSONText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // maps of strings and slices of plain structs always marshal
	}
	switch string(b) {
	case "null":
		return "{}"
	}
	return string(b)
}

// FromJSONText is JSONText's inverse.
func FromJSONText(s string, into any) error {
	if s == "" {
		return nil
	}
	if err := json.Unmarshal([]byte(s), into); err != nil {
		return fmt.Errorf("stored JSON: %w", err)
	}
	return nil
}

// NotificationWhere renders f's conditions over the outbox.
func NotificationWhere(f controlplane.NotificationFilter, a *Args) string {
	var conds []string
	if f.AlertID != 0 {
		conds = append(conds, "alert_id = "+a.Add(f.AlertID))
	}
	if f.ChannelID != 0 {
		conds = append(conds, "channel_id = "+a.Add(f.ChannelID))
	}
	if f.Status != "" {
		conds = append(conds, "status = "+a.Add(f.Status))
	}
	if len(conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(conds, " AND ")
}

// alertScopeWhere is AlertScope.Sees in SQL: a tenant's alerts, or a
// platform-wide alert about one of the scope's nodes.
func alertScopeWhere(s *controlplane.AlertScope, a *Args) string {
	list := func(vals []string) string {
		ph := make([]string, len(vals))
		for i, v := range vals {
			ph[i] = a.Add(v)
		}
		return strings.Join(ph, ", ")
	}
	tenants, nodes := "1 = 0", "1 = 0"
	if len(s.Tenants) > 0 {
		tenants = "tenant IN (" + list(s.Tenants) + ")"
	}
	if len(s.Nodes) > 0 {
		nodes = "(tenant = '' AND node IN (" + list(s.Nodes) + "))"
	}
	return "(" + tenants + " OR " + nodes + ")"
}
