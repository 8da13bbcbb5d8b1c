package alertapi

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/prometheus/common/model"
	promrules "github.com/prometheus/prometheus/rules"

	"github.com/heteroflow/heteroflow/alerts"
	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/httpapi"
)

type rulesOut struct {
	Items []RuleJSON `json:"items"`
}

func durString(d time.Duration) string {
	if d == 0 {
		return "0s"
	}
	return model.Duration(d).String()
}

func (h *Handlers) listRules(ctx context.Context, _ *struct{}) (*httpapi.Body[rulesOut], error) {
	groups, err := h.engine.Groups(ctx)
	if err != nil {
		return nil, err
	}
	custom, err := h.store.ListAlertRules(ctx)
	if err != nil {
		return nil, err
	}
	v, err := h.visibility(ctx)
	if err != nil {
		return nil, err
	}
	live := map[int64]*promrules.AlertingRule{}
	out := rulesOut{Items: []RuleJSON{}}
	for _, g := range groups {
		origin := h.engine.Origin(promrules.GroupKey(g.File(), g.Name()))
		for _, r := range g.Rules() {
			if origin == "custom" {
				if ar, ok := r.(*promrules.AlertingRule); ok {
					id, _ := strconv.ParseInt(ar.Labels().Get(alerts.LabelRuleID), 10, 64)
					live[id] = ar
				}
				continue
			}
			rj := ruleJSON(origin, g.Name(), r)
			if ar, ok := r.(*promrules.AlertingRule); ok && !v.All {
				// A shipped rule is everyone's; its firing alerts are not.
				rj.Active = len(visibleAlerts(v, ar))
				if rj.Active == 0 {
					rj.State = "inactive"
				}
			}
			out.Items = append(out.Items, rj)
		}
	}
	for _, c := range custom {
		if !tenantVisible(v, c.Tenant) {
			continue
		}
		rj := RuleJSON{ID: c.ID, Origin: "custom", Group: fmt.Sprintf("custom-%d-%s", c.ID, c.Name), Name: c.Name, Type: "alerting",
			Expr: c.Expr, For: durString(c.For), KeepFiringFor: durString(c.KeepFiringFor), Level: string(c.Level), Tenant: c.Tenant,
			Labels: nonNil(c.Labels), Annotations: nonNil(c.Annotations), Enabled: c.Enabled, State: "inactive", Health: "unknown",
			CreatedBy: c.CreatedBy, UpdatedAt: &c.UpdatedAt}
		if ar := live[c.ID]; ar != nil {
			rj.State, rj.Health, rj.Active = ar.State().String(), string(ar.Health()), len(ar.ActiveAlerts())
			if err := ar.LastError(); err != nil {
				rj.LastError = err.Error()
			}
		}
		out.Items = append(out.Items, rj)
	}
	return &httpapi.Body[rulesOut]{Body: out}, nil
}

func ruleJSON(origin, group string, r promrules.Rule) RuleJSON {
	rj := RuleJSON{Origin: origin, Group: group, Name: r.Name(), Expr: r.Query().String(), Labels: r.Labels().Map(),
		Annotations: map[string]string{}, Enabled: true, Health: string(r.Health()), For: "0s", KeepFiringFor: "0s", State: "inactive"}
	if err := r.LastError(); err != nil {
		rj.LastError = err.Error()
	}
	switch r := r.(type) {
	case *promrules.AlertingRule:
		rj.Type, rj.Level = "alerting", string(controlplane.ParseAlertLevel(r.Labels().Get(alerts.LabelSeverity)))
		rj.For, rj.KeepFiringFor = durString(r.HoldDuration()), durString(r.KeepFiringFor())
		rj.Annotations = r.Annotations().Map()
		rj.Active = len(r.ActiveAlerts())
		if st := r.State(); st != promrules.StateUnknown {
			rj.State = st.String()
		}
	default:
		rj.Type, rj.State = "recording", ""
	}
	return rj
}

// ruleFrom turns a submitted spec into a rule owned by a tenant: callers
// other than admins own rules of their own tenant only.
func (h *Handlers) ruleFrom(ctx context.Context, spec RuleSpecJSON) (*controlplane.AlertRule, error) {
	p := httpapi.PrincipalFrom(ctx)
	tenant := spec.Tenant
	if tenant == "" {
		tenant = p.Tenant
	}
	if (p.Role != controlplane.RoleAdmin && p.Tenant != "" && tenant != p.Tenant && p.ClusterWide()) ||
		(!p.ClusterWide() && p.MembershipOf(tenant) == nil) {
		return nil, controlplane.Coded(controlplane.ErrForbidden, codeRuleForbidden, []string{"tenant", tenant}, "rules of tenant %q belong to its members", tenant)
	}
	forD, err := parseDur("for", spec.For)
	if err != nil {
		return nil, err
	}
	keep, err := parseDur("keep_firing_for", spec.KeepFiringFor)
	if err != nil {
		return nil, err
	}
	r := &controlplane.AlertRule{Tenant: tenant, Name: spec.Name, Expr: spec.Expr, For: forD, KeepFiringFor: keep,
		Level: controlplane.AlertLevel(spec.Level), Labels: spec.Labels, Annotations: spec.Annotations, Enabled: true}
	if spec.Enabled != nil {
		r.Enabled = *spec.Enabled
	}
	if err := alerts.ValidateRule(r); err != nil {
		return nil, err
	}
	return r, nil
}

// owned loads a custom rule the caller may change.
func (h *Handlers) owned(ctx context.Context, id int64) (*controlplane.AlertRule, error) {
	r, err := h.store.GetAlertRule(ctx, id)
	if err != nil {
		return nil, err
	}
	p := httpapi.PrincipalFrom(ctx)
	if p.Role != controlplane.RoleAdmin && p.Tenant != "" && r.Tenant != p.Tenant {
		return nil, controlplane.Coded(controlplane.ErrForbidden, codeRuleForbidden, []string{"tenant", r.Tenant}, "rule %d belongs to tenant %q", id, r.Tenant)
	}
	return r, nil
}

type ruleIn struct {
	Body RuleSpecJSON
}

func (h *Handlers) customJSON(r *controlplane.AlertRule) RuleJSON {
	return RuleJSON{ID: r.ID, Origin: "custom", Group: fmt.Sprintf("custom-%d-%s", r.ID, r.Name), Name: r.Name, Type: "alerting",
		Expr: r.Expr, For: durString(r.For), KeepFiringFor: durString(r.KeepFiringFor), Level: string(r.Level), Tenant: r.Tenant,
		Labels: nonNil(r.Labels), Annotations: nonNil(r.Annotations), Enabled: r.Enabled, State: "inactive", Health: "unknown",
		CreatedBy: r.CreatedBy, UpdatedAt: &r.UpdatedAt}
}

func (h *Handlers) createRule(ctx context.Context, in *ruleIn) (*httpapi.Body[RuleJSON], error) {
	httpapi.SetAudit(ctx, "alert-rule.create", "alert-rule/"+in.Body.Name)
	r, err := h.ruleFrom(ctx, in.Body)
	if err != nil {
		return nil, err
	}
	r.CreatedBy = httpapi.PrincipalFrom(ctx).Actor()
	if err := h.store.CreateAlertRule(ctx, r); err != nil {
		return nil, err
	}
	httpapi.SetAudit(ctx, "alert-rule.create", fmt.Sprintf("alert-rule/%d", r.ID))
	h.reload(ctx)
	return &httpapi.Body[RuleJSON]{Body: h.customJSON(r)}, nil
}

func (h *Handlers) reload(ctx context.Context) {
	// The leader also notices the change at its next evaluation; reloading
	// here makes the listing current at once on this server.
	_ = h.engine.Reload(ctx)
}

func (h *Handlers) getRule(ctx context.Context, in *idIn) (*httpapi.Body[RuleJSON], error) {
	r, err := h.store.GetAlertRule(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	v, err := h.visibility(ctx)
	if err != nil {
		return nil, err
	}
	if !tenantVisible(v, r.Tenant) {
		return nil, controlplane.ErrNotFound
	}
	return &httpapi.Body[RuleJSON]{Body: h.customJSON(r)}, nil
}

type updateRuleIn struct {
	ID   int64 `path:"id" minimum:"1"`
	Body RuleSpecJSON
}

func (h *Handlers) updateRule(ctx context.Context, in *updateRuleIn) (*httpapi.Body[RuleJSON], error) {
	httpapi.SetAudit(ctx, "alert-rule.update", fmt.Sprintf("alert-rule/%d", in.ID))
	cur, err := h.owned(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	if in.Body.Tenant == "" {
		in.Body.Tenant = cur.Tenant
	}
	r, err := h.ruleFrom(ctx, in.Body)
	if err != nil {
		return nil, err
	}
	r.ID, r.CreatedBy, r.CreatedAt = cur.ID, cur.CreatedBy, cur.CreatedAt
	if err := h.store.UpdateAlertRule(ctx, r); err != nil {
		return nil, err
	}
	httpapi.SetAuditDetail(ctx, fmt.Sprintf("enabled=%t", r.Enabled))
	h.reload(ctx)
	return &httpapi.Body[RuleJSON]{Body: h.customJSON(r)}, nil
}

func (h *Handlers) deleteRule(ctx context.Context, in *idIn) (*struct{}, error) {
	httpapi.SetAudit(ctx, "alert-rule.delete", fmt.Sprintf("alert-rule/%d", in.ID))
	if _, err := h.owned(ctx, in.ID); err != nil {
		return nil, err
	}
	if err := h.store.DeleteAlertRule(ctx, in.ID); err != nil {
		return nil, err
	}
	h.reload(ctx)
	return nil, nil
}

type testRuleOut struct {
	EvaluatedAt time.Time          `json:"evaluated_at"`
	Alerts      []alerts.TestAlert `json:"alerts"`
}

func (h *Handlers) testRule(ctx context.Context, in *ruleIn) (*httpapi.Body[testRuleOut], error) {
	r, err := h.ruleFrom(ctx, in.Body)
	if err != nil {
		return nil, err
	}
	v, err := h.visibility(ctx)
	if err != nil {
		return nil, err
	}
	if r.Expr, err = scopedExpr(v, r.Expr); err != nil {
		return nil, err
	}
	now := h.now()
	got, err := h.engine.TestRule(ctx, r, now)
	if err != nil {
		return nil, err
	}
	return &httpapi.Body[testRuleOut]{Body: testRuleOut{EvaluatedAt: now, Alerts: got}}, nil
}
