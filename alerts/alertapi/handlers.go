package alertapi

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/prometheus/common/model"

	"github.com/heteroflow/heteroflow/alerts"
	"github.com/heteroflow/heteroflow/alerts/notify"
	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/auth"
	"github.com/heteroflow/heteroflow/controlplane/httpapi"
)

// Handlers serve the alert routes.
type Handlers struct {
	store  alerts.Store
	engine *alerts.Engine
	worker *notify.Worker
	now    func() time.Time
	// visible is the caller's visibility (api.VisibilityOf).
	visible func(context.Context) (httpapi.Visibility, error)
}

// Mount registers every alert route on api.
func Mount(api *httpapi.API, st alerts.Store, eng *alerts.Engine, w *notify.Worker) {
	h := &Handlers{store: st, engine: eng, worker: w, now: time.Now, visible: api.VisibilityOf}
	p := httpapi.Prefix
	read, ack := httpapi.Perm(auth.ResAlerts, auth.ActRead), httpapi.Perm(auth.ResAlerts, auth.ActAck)
	write, del := httpapi.Perm(auth.ResAlerts, auth.ActWrite), httpapi.Perm(auth.ResAlerts, auth.ActDelete)
	tags := []string{"alerts"}
	op := func(id, method, path, summary string, status int, audit string) huma.Operation {
		o := huma.Operation{OperationID: id, Method: method, Path: p + path, Summary: summary, Tags: tags, DefaultStatus: status}
		if audit != "" {
			o.Metadata = httpapi.Audited(audit)
		}
		return o
	}
	register(api, op("list-alerts", http.MethodGet, "/alerts", "List alert instances (newest first) with filters", 0, ""), read, h.listAlerts)
	register(api, op("alert-stats", http.MethodGet, "/alerts/stats", "Alert statistics: counts by level, state, rule, node and day; time to acknowledge and resolve", 0, ""), read, h.stats)
	register(api, op("get-alert", http.MethodGet, "/alerts/{id}", "An alert with its history and notification deliveries", 0, ""), read, h.getAlert)
	register(api, op("ack-alert", http.MethodPost, "/alerts/{id}/ack", "Acknowledge an ACTIVE alert (409 otherwise)", 0, "alert.ack"), ack, h.ackAlert)
	register(api, op("resolve-alert", http.MethodPost, "/alerts/{id}/resolve", "Resolve an open alert by hand with a reason", 0, "alert.resolve"), ack, h.resolveAlert)

	register(api, op("list-alert-rules", http.MethodGet, "/alert-rules", "Every rule: shipped, rules directory and custom, with live state", 0, ""), read, h.listRules)
	register(api, op("create-alert-rule", http.MethodPost, "/alert-rules", "Create a custom rule (PromQL validated: 400 names the parse error)", http.StatusCreated, "alert-rule.create"), write, h.createRule)
	register(api, op("test-alert-rule", http.MethodPost, "/alert-rules/test", "Evaluate a rule against live data now, without saving it", 0, ""), read, h.testRule)
	register(api, op("get-alert-rule", http.MethodGet, "/alert-rules/{id}", "A custom rule", 0, ""), read, h.getRule)
	register(api, op("update-alert-rule", http.MethodPut, "/alert-rules/{id}", "Replace a custom rule (also to enable or disable it)", 0, "alert-rule.update"), write, h.updateRule)
	register(api, op("delete-alert-rule", http.MethodDelete, "/alert-rules/{id}", "Delete a custom rule (its alerts resolve)", http.StatusNoContent, "alert-rule.delete"), del, h.deleteRule)

	register(api, op("get-alert-params", http.MethodGet, "/alert-params", "Thresholds and durations of the shipped rules", 0, ""), read, h.getParams)
	register(api, op("put-alert-params", http.MethodPut, "/alert-params", "Change thresholds and durations (an empty value restores the default)", 0, "alert-params.update"), write, h.putParams)

	register(api, op("list-silences", http.MethodGet, "/alert-silences", "Silences, newest first", 0, ""), read, h.listSilences)
	register(api, op("create-silence", http.MethodPost, "/alert-silences", "Mute notifications for matching alerts in a time window", http.StatusCreated, "silence.create"), ack, h.createSilence)
	register(api, op("expire-silence", http.MethodDelete, "/alert-silences/{id}", "End a silence now", http.StatusNoContent, "silence.expire"), ack, h.expireSilence)

	register(api, op("list-alert-channels", http.MethodGet, "/alert-channels", "Notification channels (secrets masked)", 0, ""), read, h.listChannels)
	register(api, op("create-alert-channel", http.MethodPost, "/alert-channels", "Create a notification channel", http.StatusCreated, "alert-channel.create"), write, h.createChannel)
	register(api, op("update-alert-channel", http.MethodPut, "/alert-channels/{id}", "Replace a channel (a masked secret keeps the stored one)", 0, "alert-channel.update"), write, h.updateChannel)
	register(api, op("delete-alert-channel", http.MethodDelete, "/alert-channels/{id}", "Delete a channel and its queued deliveries", http.StatusNoContent, "alert-channel.delete"), del, h.deleteChannel)
	register(api, op("test-alert-channel", http.MethodPost, "/alert-channels/{id}/test", "Send a test notification now (400 with the receiver's answer on failure)", 0, "alert-channel.test"), write, h.testChannel)
	register(api, op("list-alert-notifications", http.MethodGet, "/alert-notifications", "Notification deliveries and their status", 0, ""), read, h.listNotifications)

	mountPrometheus(api, h)
}

type idIn struct {
	ID int64 `path:"id" minimum:"1"`
}

func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

func parseTime(name, s string) (*time.Time, error) {
	if s == "" {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return nil, controlplane.InvalidCode(codeBadTime, []string{"name", name}, "%s must be RFC 3339, e.g. 2026-03-01T10:00:00Z", name)
	}
	return &t, nil
}

type listAlertsIn struct {
	httpapi.PageParams
	State  string `query:"state" doc:"Comma-separated: ACTIVE, ACKNOWLEDGED, RESOLVED"`
	Level  string `query:"level" doc:"Comma-separated: INFO, WARN, ERROR"`
	Rule   string `query:"rule" maxLength:"256"`
	Node   string `query:"node" maxLength:"256"`
	Tenant string `query:"tenant" maxLength:"128"`
	Since  string `query:"since" doc:"Fired at or after (RFC 3339)"`
	Until  string `query:"until" doc:"Fired before (RFC 3339)"`
}

func (h *Handlers) listAlerts(ctx context.Context, in *listAlertsIn) (*httpapi.Body[*httpapi.List[AlertJSON]], error) {
	f := controlplane.AlertFilter{Rule: in.Rule, Node: in.Node, Page: controlplane.Page{Limit: in.Limit, Offset: in.Offset}.Normalize()}
	for _, s := range splitList(strings.ToUpper(in.State)) {
		f.States = append(f.States, controlplane.AlertState(s))
	}
	for _, l := range splitList(strings.ToUpper(in.Level)) {
		f.Levels = append(f.Levels, controlplane.AlertLevel(l))
	}
	if in.Tenant != "" {
		f.Tenant = &in.Tenant
	}
	v, err := h.visibility(ctx)
	if err != nil {
		return nil, err
	}
	if err := tenantFilter(v, in.Tenant); err != nil {
		return nil, err
	}
	f.Scope = v.AlertScope()
	if f.Since, err = parseTime("since", in.Since); err != nil {
		return nil, err
	}
	if f.Until, err = parseTime("until", in.Until); err != nil {
		return nil, err
	}
	rows, total, err := h.store.ListAlerts(ctx, f)
	if err != nil {
		return nil, err
	}
	items := make([]AlertJSON, len(rows))
	for i, a := range rows {
		items[i] = alertJSON(a)
	}
	return &httpapi.Body[*httpapi.List[AlertJSON]]{Body: &httpapi.List[AlertJSON]{Items: items, Total: total, Limit: f.Page.Limit, Offset: f.Page.Offset}}, nil
}

func (h *Handlers) getAlert(ctx context.Context, in *idIn) (*httpapi.Body[AlertDetailJSON], error) {
	a, err := h.visibleAlert(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	evs, err := h.store.ListAlertEvents(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	ns, _, err := h.store.ListNotifications(ctx, controlplane.NotificationFilter{AlertID: in.ID, Page: controlplane.Page{Limit: controlplane.MaxPageLimit}})
	if err != nil {
		return nil, err
	}
	out := AlertDetailJSON{AlertJSON: alertJSON(a), Events: []AlertEventJSON{}, Notifications: []NotificationJSON{}}
	for _, e := range evs {
		out.Events = append(out.Events, AlertEventJSON{State: string(e.State), Actor: e.Actor, Comment: e.Comment, At: e.At})
	}
	for _, n := range ns {
		out.Notifications = append(out.Notifications, notificationJSON(n))
	}
	return &httpapi.Body[AlertDetailJSON]{Body: out}, nil
}

// visibleAlert loads an alert the caller may see; another tenant's is
// not found, as if it did not exist.
func (h *Handlers) visibleAlert(ctx context.Context, id int64) (*controlplane.AlertInstance, error) {
	a, err := h.store.GetAlert(ctx, id)
	if err != nil {
		return nil, err
	}
	v, err := h.visibility(ctx)
	if err != nil {
		return nil, err
	}
	if !v.AlertScope().Sees(a) {
		return nil, controlplane.ErrNotFound
	}
	return a, nil
}

type ackIn struct {
	ID   int64 `path:"id" minimum:"1"`
	Body *struct {
		Comment string `json:"comment,omitempty" maxLength:"1024"`
	} `required:"false"`
}

func (h *Handlers) ackAlert(ctx context.Context, in *ackIn) (*httpapi.Body[AlertJSON], error) {
	httpapi.SetAudit(ctx, "alert.ack", fmt.Sprintf("alert/%d", in.ID))
	comment := ""
	if in.Body != nil {
		comment = in.Body.Comment
	}
	a, err := h.store.AckAlert(ctx, in.ID, httpapi.PrincipalFrom(ctx).Actor(), comment, h.now())
	if err != nil {
		return nil, err
	}
	return &httpapi.Body[AlertJSON]{Body: alertJSON(a)}, nil
}

type resolveIn struct {
	ID   int64 `path:"id" minimum:"1"`
	Body struct {
		Reason string `json:"reason" minLength:"1" maxLength:"1024" doc:"Why it is resolved by hand"`
	}
}

func (h *Handlers) resolveAlert(ctx context.Context, in *resolveIn) (*httpapi.Body[AlertJSON], error) {
	httpapi.SetAudit(ctx, "alert.resolve", fmt.Sprintf("alert/%d", in.ID))
	if strings.TrimSpace(in.Body.Reason) == "" {
		return nil, controlplane.InvalidCode(codeReasonRequired, nil, "reason is required")
	}
	cur, err := h.store.GetAlert(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	chans, err := h.store.ListChannels(ctx)
	if err != nil {
		return nil, err
	}
	var notify []int64
	if !cur.Silenced {
		notify = alerts.Routes(chans, cur, true)
	}
	a, err := h.store.ResolveAlert(ctx, in.ID, httpapi.PrincipalFrom(ctx).Actor(), in.Body.Reason, h.now(), notify)
	if err != nil {
		return nil, err
	}
	if h.worker != nil && len(notify) > 0 {
		h.worker.Wake()
	}
	return &httpapi.Body[AlertJSON]{Body: alertJSON(a)}, nil
}

type statsIn struct {
	Since  string `query:"since" doc:"Window start (RFC 3339; default 30 days ago)"`
	Until  string `query:"until" doc:"Window end (RFC 3339; default now)"`
	Tenant string `query:"tenant" maxLength:"128"`
}

func (h *Handlers) stats(ctx context.Context, in *statsIn) (*httpapi.Body[*controlplane.AlertStats], error) {
	until, since := h.now(), h.now().Add(-30*24*time.Hour)
	if t, err := parseTime("since", in.Since); err != nil {
		return nil, err
	} else if t != nil {
		since = *t
	}
	if t, err := parseTime("until", in.Until); err != nil {
		return nil, err
	} else if t != nil {
		until = *t
	}
	v, err := h.visibility(ctx)
	if err != nil {
		return nil, err
	}
	if err := tenantFilter(v, in.Tenant); err != nil {
		return nil, err
	}
	f := controlplane.AlertFilter{Scope: v.AlertScope(), Since: &since, Until: &until}
	if in.Tenant != "" {
		f.Tenant = &in.Tenant
	}
	st, err := h.store.AlertStats(ctx, f)
	if err != nil {
		return nil, err
	}
	if st.ByDay == nil {
		st.ByDay = []controlplane.DayCount{}
	}
	return &httpapi.Body[*controlplane.AlertStats]{Body: st}, nil
}

// ---- parameters ----

type paramsOut struct {
	Items []alerts.ParamState `json:"items"`
}

func (h *Handlers) getParams(ctx context.Context, _ *struct{}) (*httpapi.Body[paramsOut], error) {
	ps, err := h.engine.Params(ctx)
	if err != nil {
		return nil, err
	}
	return &httpapi.Body[paramsOut]{Body: paramsOut{Items: ps}}, nil
}

type putParamsIn struct {
	Body struct {
		Values map[string]string `json:"values" doc:"key → value (number, or a duration such as 10m); \"\" restores the default"`
	}
}

func (h *Handlers) putParams(ctx context.Context, in *putParamsIn) (*httpapi.Body[paramsOut], error) {
	httpapi.SetAudit(ctx, "alert-params.update", "alert-params")
	keys := make([]string, 0, len(in.Body.Values))
	for k, v := range in.Body.Values {
		keys = append(keys, k+"="+v)
	}
	httpapi.SetAuditDetail(ctx, strings.Join(keys, " "))
	if err := h.engine.SetParams(ctx, alerts.ParamValues(in.Body.Values)); err != nil {
		return nil, err
	}
	return h.getParams(ctx, nil)
}

func parseDur(name, s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := model.ParseDuration(s)
	if err != nil {
		return 0, controlplane.InvalidCode(codeBadDuration, []string{"name", name, "value", s}, "%s %q is not a duration such as 5m", name, s)
	}
	return time.Duration(d), nil
}
