package alertapi

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/danielgtaylor/huma/v2"
	promrules "github.com/prometheus/prometheus/rules"

	"github.com/heteroflow/heteroflow/alerts"
	"github.com/heteroflow/heteroflow/controlplane/auth"
	"github.com/heteroflow/heteroflow/controlplane/httpapi"
)

// The shapes of Prometheus' HTTP API (web/api/v1: /api/v1/rules and
// /api/v1/alerts), which Grafana's alert list and promtool-style clients read.

// PromAlert is one alert.
type PromAlert struct {
	Labels          map[string]string `json:"labels"`
	Annotations     map[string]string `json:"annotations"`
	State           string            `json:"state"`
	ActiveAt        *time.Time        `json:"activeAt,omitempty"`
	KeepFiringSince *time.Time        `json:"keepFiringSince,omitempty"`
	Value           string            `json:"value"`
}

// PromRule is an alerting or recording rule.
type PromRule struct {
	State          string            `json:"state,omitempty"`
	Name           string            `json:"name"`
	Query          string            `json:"query"`
	Duration       float64           `json:"duration,omitempty"`
	KeepFiringFor  float64           `json:"keepFiringFor,omitempty"`
	Labels         map[string]string `json:"labels"`
	Annotations    map[string]string `json:"annotations,omitempty"`
	Alerts         []PromAlert       `json:"alerts,omitempty"`
	Health         string            `json:"health"`
	LastError      string            `json:"lastError,omitempty"`
	EvaluationTime float64           `json:"evaluationTime"`
	LastEvaluation time.Time         `json:"lastEvaluation"`
	Type           string            `json:"type"`
}

// PromGroup is a rule group.
type PromGroup struct {
	Name           string     `json:"name"`
	File           string     `json:"file"`
	Rules          []PromRule `json:"rules"`
	Interval       float64    `json:"interval"`
	Limit          int        `json:"limit"`
	EvaluationTime float64    `json:"evaluationTime"`
	LastEvaluation time.Time  `json:"lastEvaluation"`
}

// PromRulesData is /api/v1/rules' data.
type PromRulesData struct {
	Groups []PromGroup `json:"groups"`
}

// PromAlertsData is /api/v1/alerts' data.
type PromAlertsData struct {
	Alerts []PromAlert `json:"alerts"`
}

// PromRulesEnvelope is the success envelope of /api/v1/rules.
type PromRulesEnvelope struct {
	Status string        `json:"status"`
	Data   PromRulesData `json:"data"`
}

// PromAlertsEnvelope is the success envelope of /api/v1/alerts.
type PromAlertsEnvelope struct {
	Status string         `json:"status"`
	Data   PromAlertsData `json:"data"`
}

type promRulesOut struct{ Body PromRulesEnvelope }

type promAlertsOut struct{ Body PromAlertsEnvelope }

type promRulesIn struct {
	Type string `query:"type" enum:"alert,record," doc:"Only alerting (alert) or recording (record) rules"`
}

func mountPrometheus(api *httpapi.API, h *Handlers) {
	read := httpapi.Perm(auth.ResMetrics, auth.ActRead)
	tags := []string{"prometheus"}
	httpapi.Register(api, huma.Operation{OperationID: "prometheus-rules", Method: http.MethodGet, Path: "/prometheus/api/v1/rules",
		Summary: "Prometheus API: rule groups with their alerts (as served by Prometheus)", Tags: tags}, read, h.promRules)
	httpapi.Register(api, huma.Operation{OperationID: "prometheus-alerts", Method: http.MethodGet, Path: "/prometheus/api/v1/alerts",
		Summary: "Prometheus API: pending and firing alerts", Tags: tags}, read, h.promAlerts)
}

// visibleAlerts are r's active alerts the caller may see.
func visibleAlerts(v httpapi.Visibility, r *promrules.AlertingRule) []*promrules.Alert {
	var out []*promrules.Alert
	for _, a := range r.ActiveAlerts() {
		if labelsVisible(v, a.Labels.Map()) {
			out = append(out, a)
		}
	}
	return out
}

func promAlerts(v httpapi.Visibility, r *promrules.AlertingRule) []PromAlert {
	out := []PromAlert{}
	for _, a := range visibleAlerts(v, r) {
		pa := PromAlert{Labels: a.Labels.Map(), Annotations: a.Annotations.Map(), State: a.State.String(),
			Value: strconv.FormatFloat(a.Value, 'e', -1, 64)}
		at := a.ActiveAt
		pa.ActiveAt = &at
		if !a.KeepFiringSince.IsZero() {
			k := a.KeepFiringSince
			pa.KeepFiringSince = &k
		}
		out = append(out, pa)
	}
	return out
}

func (h *Handlers) promRules(ctx context.Context, in *promRulesIn) (*promRulesOut, error) {
	groups, err := h.engine.Groups(ctx)
	if err != nil {
		return nil, err
	}
	v, err := h.visibility(ctx)
	if err != nil {
		return nil, err
	}
	out := &promRulesOut{}
	out.Body.Status = "success"
	out.Body.Data.Groups = []PromGroup{}
	for _, g := range groups {
		pg := PromGroup{Name: g.Name(), File: g.File(), Interval: g.Interval().Seconds(), Limit: g.Limit(), Rules: []PromRule{},
			EvaluationTime: g.GetEvaluationTime().Seconds(), LastEvaluation: g.GetLastEvaluation()}
		for _, r := range g.Rules() {
			if t := r.Labels().Get(alerts.LabelTenant); t != "" && !tenantVisible(v, t) {
				continue // another tenant's custom rule
			}
			pr := PromRule{Name: r.Name(), Query: r.Query().String(), Labels: r.Labels().Map(), Health: string(r.Health()),
				EvaluationTime: r.GetEvaluationDuration().Seconds(), LastEvaluation: r.GetEvaluationTimestamp()}
			if err := r.LastError(); err != nil {
				pr.LastError = err.Error()
			}
			switch r := r.(type) {
			case *promrules.AlertingRule:
				if in.Type == "record" {
					continue
				}
				pr.Type, pr.Duration, pr.KeepFiringFor = "alerting", r.HoldDuration().Seconds(), r.KeepFiringFor().Seconds()
				pr.Annotations, pr.Alerts = r.Annotations().Map(), promAlerts(v, r)
				pr.State = "inactive"
				if st := r.State(); st > promrules.StateInactive && len(pr.Alerts) > 0 {
					pr.State = st.String()
				}
			default:
				if in.Type == "alert" {
					continue
				}
				pr.Type = "recording"
			}
			pg.Rules = append(pg.Rules, pr)
		}
		if len(pg.Rules) > 0 {
			out.Body.Data.Groups = append(out.Body.Data.Groups, pg)
		}
	}
	return out, nil
}

func (h *Handlers) promAlerts(ctx context.Context, _ *struct{}) (*promAlertsOut, error) {
	groups, err := h.engine.Groups(ctx)
	if err != nil {
		return nil, err
	}
	v, err := h.visibility(ctx)
	if err != nil {
		return nil, err
	}
	out := &promAlertsOut{}
	out.Body.Status = "success"
	out.Body.Data.Alerts = []PromAlert{}
	for _, g := range groups {
		for _, r := range g.AlertingRules() {
			out.Body.Data.Alerts = append(out.Body.Data.Alerts, promAlerts(v, r)...)
		}
	}
	return out, nil
}
