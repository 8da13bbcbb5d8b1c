package alertapi

import (
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
)

// AlertJSON is an alert instance as clients see it.
type AlertJSON struct {
	ID          int64             `json:"id"`
	Rule        string            `json:"rule"`
	RuleID      int64             `json:"rule_id,omitempty"`
	Level       string            `json:"level" enum:"INFO,WARN,ERROR"`
	State       string            `json:"state" enum:"ACTIVE,ACKNOWLEDGED,RESOLVED"`
	Tenant      string            `json:"tenant"`
	Node        string            `json:"node"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	Value       float64           `json:"value"`
	Silenced    bool              `json:"silenced"`
	ActiveAt    time.Time         `json:"active_at"`
	FiredAt     time.Time         `json:"fired_at"`
	AckedAt     *time.Time        `json:"acked_at,omitempty"`
	AckedBy     string            `json:"acked_by,omitempty"`
	AckComment  string            `json:"ack_comment,omitempty"`
	ResolvedAt  *time.Time        `json:"resolved_at,omitempty"`
	ResolvedBy  string            `json:"resolved_by,omitempty"`
	Resolution  string            `json:"resolution,omitempty"`
}

func alertJSON(a *controlplane.AlertInstance) AlertJSON {
	return AlertJSON{ID: a.ID, Rule: a.Rule, RuleID: a.RuleID, Level: string(a.Level), State: string(a.State), Tenant: a.Tenant,
		Node: a.Node, Labels: nonNil(a.Labels), Annotations: nonNil(a.Annotations), Value: a.Value, Silenced: a.Silenced,
		ActiveAt: a.ActiveAt, FiredAt: a.FiredAt, AckedAt: a.AckedAt, AckedBy: a.AckedBy, AckComment: a.AckComment,
		ResolvedAt: a.ResolvedAt, ResolvedBy: a.ResolvedBy, Resolution: a.Resolution}
}

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// AlertEventJSON is one line of an alert's history.
type AlertEventJSON struct {
	State   string    `json:"state"`
	Actor   string    `json:"actor"`
	Comment string    `json:"comment,omitempty"`
	At      time.Time `json:"at"`
}

// NotificationJSON is one outbox row: a delivery and its status.
type NotificationJSON struct {
	ID          int64      `json:"id"`
	ChannelID   int64      `json:"channel_id"`
	AlertID     int64      `json:"alert_id"`
	Kind        string     `json:"kind" enum:"firing,resolved"`
	Status      string     `json:"status" enum:"pending,delivered,failed"`
	Attempts    int        `json:"attempts"`
	NextAttempt time.Time  `json:"next_attempt"`
	LastError   string     `json:"last_error,omitempty"`
	CreatedAt   time.Time  `json:"created_at"`
	DeliveredAt *time.Time `json:"delivered_at,omitempty"`
}

func notificationJSON(n *controlplane.Notification) NotificationJSON {
	return NotificationJSON{ID: n.ID, ChannelID: n.ChannelID, AlertID: n.AlertID, Kind: n.Kind, Status: n.Status, Attempts: n.Attempts,
		NextAttempt: n.NextAttempt, LastError: n.LastError, CreatedAt: n.CreatedAt, DeliveredAt: n.DeliveredAt}
}

// AlertDetailJSON is an alert with its history and deliveries.
type AlertDetailJSON struct {
	AlertJSON
	Events        []AlertEventJSON   `json:"events"`
	Notifications []NotificationJSON `json:"notifications"`
}

// RuleSpecJSON is what a client submits for a custom rule.
type RuleSpecJSON struct {
	Name          string            `json:"name" minLength:"1" maxLength:"128" doc:"Alert name, [a-zA-Z_][a-zA-Z0-9_]*"`
	Expr          string            `json:"expr" minLength:"1" maxLength:"4096" doc:"PromQL; the alert fires for each series it returns"`
	For           string            `json:"for,omitempty" doc:"How long the condition must hold before firing, e.g. 5m"`
	KeepFiringFor string            `json:"keep_firing_for,omitempty" doc:"How long to keep firing after the condition clears"`
	Level         string            `json:"level" enum:"INFO,WARN,ERROR"`
	Tenant        string            `json:"tenant,omitempty" maxLength:"128" doc:"Owner tenant (default: the caller's)"`
	Labels        map[string]string `json:"labels,omitempty"`
	Annotations   map[string]string `json:"annotations,omitempty" doc:"summary, summary_zh, description…; Prometheus templates ($labels, $value)"`
	Enabled       *bool             `json:"enabled,omitempty" doc:"Default true"`
}

// RuleJSON is a rule: shipped, from the rules directory, or custom.
type RuleJSON struct {
	ID            int64             `json:"id,omitempty" doc:"Custom rules only"`
	Origin        string            `json:"origin" enum:"shipped,file,custom"`
	Group         string            `json:"group"`
	Name          string            `json:"name"`
	Type          string            `json:"type" enum:"alerting,recording"`
	Expr          string            `json:"expr"`
	For           string            `json:"for"`
	KeepFiringFor string            `json:"keep_firing_for"`
	Level         string            `json:"level,omitempty"`
	Tenant        string            `json:"tenant,omitempty"`
	Labels        map[string]string `json:"labels"`
	Annotations   map[string]string `json:"annotations"`
	Enabled       bool              `json:"enabled"`
	State         string            `json:"state" doc:"inactive, pending or firing (on the leader)"`
	Health        string            `json:"health"`
	LastError     string            `json:"last_error,omitempty"`
	Active        int               `json:"active" doc:"Pending or firing alerts"`
	CreatedBy     string            `json:"created_by,omitempty"`
	UpdatedAt     *time.Time        `json:"updated_at,omitempty"`
}

// SilenceJSON is a silence.
type SilenceJSON struct {
	ID        int64                       `json:"id"`
	Tenant    string                      `json:"tenant"`
	Matchers  []controlplane.LabelMatcher `json:"matchers"`
	StartsAt  time.Time                   `json:"starts_at"`
	EndsAt    time.Time                   `json:"ends_at"`
	Comment   string                      `json:"comment"`
	CreatedBy string                      `json:"created_by"`
	CreatedAt time.Time                   `json:"created_at"`
	Active    bool                        `json:"active"`
}

func silenceJSON(s *controlplane.Silence, now time.Time) SilenceJSON {
	return SilenceJSON{ID: s.ID, Tenant: s.Tenant, Matchers: s.Matchers, StartsAt: s.StartsAt, EndsAt: s.EndsAt, Comment: s.Comment,
		CreatedBy: s.CreatedBy, CreatedAt: s.CreatedAt, Active: !now.Before(s.StartsAt) && now.Before(s.EndsAt)}
}

// ChannelJSON is a notification channel; secrets are never returned.
type ChannelJSON struct {
	ID           int64             `json:"id"`
	Name         string            `json:"name"`
	Type         string            `json:"type" enum:"alertmanager,webhook,dingtalk,wecom,feishu,email"`
	Config       map[string]string `json:"config" doc:"Secret values (secret, password, bearer_token) read as ******; below operator the url reads as scheme://host/****** (robot keys and webhook tokens live in it)"`
	Levels       []string          `json:"levels"`
	Tenant       string            `json:"tenant"`
	Enabled      bool              `json:"enabled"`
	SendResolved bool              `json:"send_resolved"`
	CreatedAt    time.Time         `json:"created_at"`
	UpdatedAt    time.Time         `json:"updated_at"`
}

// secretKeys are configuration values never sent back to clients.
var secretKeys = map[string]bool{"secret": true, "password": true, "bearer_token": true}

// masked stands in for a secret in responses; sending it back keeps the stored value.
const masked = "******"

// channelJSON renders c; fullURL is for the callers who manage channels
// (cluster admins and operators). Everyone else who sees the channel (its
// tenant's members and viewers) gets the url masked by maskURL: WeCom's
// key, DingTalk's access_token and Feishu's hook path are the robot's only
// credential, and whoever holds them can post to the group.
func channelJSON(c *controlplane.NotifyChannel, fullURL bool) ChannelJSON {
	cfg := map[string]string{}
	for k, v := range c.Config {
		switch {
		case secretKeys[k] && v != "":
			v = masked
		case k == urlKey && !fullURL:
			v = maskURL(v)
		}
		cfg[k] = v
	}
	lv := make([]string, len(c.Levels))
	for i, l := range c.Levels {
		lv[i] = string(l)
	}
	return ChannelJSON{ID: c.ID, Name: c.Name, Type: c.Type, Config: cfg, Levels: lv, Tenant: c.Tenant, Enabled: c.Enabled,
		SendResolved: c.SendResolved, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
}

// ChannelSpecJSON is what a client submits for a channel.
type ChannelSpecJSON struct {
	Name         string            `json:"name" minLength:"1" maxLength:"128"`
	Type         string            `json:"type" doc:"alertmanager, webhook, dingtalk, wecom, feishu or email"`
	Config       map[string]string `json:"config" doc:"url (+ secret for webhook, dingtalk, feishu; username/password or bearer_token for alertmanager); email: smtp_host, from, to, username, password"`
	Levels       []string          `json:"levels,omitempty" doc:"Levels routed here (default all)"`
	Tenant       string            `json:"tenant,omitempty" doc:"Only this tenant's alerts (default all)"`
	Enabled      *bool             `json:"enabled,omitempty"`
	SendResolved *bool             `json:"send_resolved,omitempty"`
}
