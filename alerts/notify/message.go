package notify

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
)

// Message is one notification: an alert instance firing or resolved.
type Message struct {
	Kind        string // controlplane.NotifyFiring / NotifyResolved
	Alert       *controlplane.AlertInstance
	ExternalURL string // console base URL for links; may be empty
	SentAt      time.Time
}

// title is the one-line headline, bilingual.
func (m Message) title() string {
	a := m.Alert
	state := "触发 FIRING"
	if m.Kind == controlplane.NotifyResolved {
		state = "已解决 RESOLVED"
	}
	return fmt.Sprintf("[%s] %s %s", a.Level, a.Rule, state)
}

func (m Message) link() string {
	if m.ExternalURL == "" {
		return ""
	}
	return fmt.Sprintf("%s/alerts?id=%d", strings.TrimRight(m.ExternalURL, "/"), m.Alert.ID)
}

// markdown renders the message for the chat robots (DingTalk, WeCom and
// Feishu all read this subset of Markdown).
func (m Message) markdown() string {
	a := m.Alert
	var b strings.Builder
	fmt.Fprintf(&b, "### %s\n\n", m.title())
	if s := a.Annotations["summary_zh"]; s != "" {
		fmt.Fprintf(&b, "%s\n\n", s)
	}
	if s := a.Annotations["summary"]; s != "" {
		fmt.Fprintf(&b, "%s\n\n", s)
	}
	fmt.Fprintf(&b, "- 级别 Level: **%s**\n", a.Level)
	if a.Node != "" {
		fmt.Fprintf(&b, "- 节点 Node: %s\n", a.Node)
	}
	if a.Tenant != "" {
		fmt.Fprintf(&b, "- 租户 Tenant: %s\n", a.Tenant)
	}
	fmt.Fprintf(&b, "- 触发时间 Fired: %s\n", a.FiredAt.UTC().Format(time.RFC3339))
	if m.Kind == controlplane.NotifyResolved && a.ResolvedAt != nil {
		fmt.Fprintf(&b, "- 解决时间 Resolved: %s\n", a.ResolvedAt.UTC().Format(time.RFC3339))
		if a.Resolution != "" {
			fmt.Fprintf(&b, "- 原因 Reason: %s\n", a.Resolution)
		}
	}
	fmt.Fprintf(&b, "- 标签 Labels: %s\n", labelString(a.Labels))
	if l := m.link(); l != "" {
		fmt.Fprintf(&b, "\n[查看 / View](%s)\n", l)
	}
	return b.String()
}

// text is the plain-text form (e-mail body, Feishu text).
func (m Message) text() string {
	md := m.markdown()
	md = strings.ReplaceAll(md, "### ", "")
	return strings.ReplaceAll(md, "**", "")
}

func labelString(l map[string]string) string {
	keys := make([]string, 0, len(l))
	for k := range l {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + l[k]
	}
	return strings.Join(parts, ", ")
}

// WebhookPayload is the generic webhook's JSON body.
type WebhookPayload struct {
	Version string       `json:"version"`
	Kind    string       `json:"kind"`
	Title   string       `json:"title"`
	Alert   WebhookAlert `json:"alert"`
	URL     string       `json:"url,omitempty"`
	SentAt  time.Time    `json:"sent_at"`
}

// WebhookAlert is the alert inside WebhookPayload.
type WebhookAlert struct {
	ID          int64             `json:"id"`
	Rule        string            `json:"rule"`
	Level       string            `json:"level"`
	State       string            `json:"state"`
	Node        string            `json:"node,omitempty"`
	Tenant      string            `json:"tenant,omitempty"`
	Value       float64           `json:"value"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	FiredAt     time.Time         `json:"fired_at"`
	AckedBy     string            `json:"acked_by,omitempty"`
	ResolvedAt  *time.Time        `json:"resolved_at,omitempty"`
	Resolution  string            `json:"resolution,omitempty"`
}

func (m Message) webhook() WebhookPayload {
	a := m.Alert
	return WebhookPayload{Version: "1", Kind: m.Kind, Title: m.title(), URL: m.link(), SentAt: m.SentAt.UTC(),
		Alert: WebhookAlert{ID: a.ID, Rule: a.Rule, Level: string(a.Level), State: string(a.State), Node: a.Node, Tenant: a.Tenant,
			Value: a.Value, Labels: a.Labels, Annotations: a.Annotations, FiredAt: a.FiredAt.UTC(), AckedBy: a.AckedBy,
			ResolvedAt: a.ResolvedAt, Resolution: a.Resolution}}
}
