package controlplane

import (
	"context"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// AlertLevel is an alert's severity: the rule's severity label.
type AlertLevel string

const (
	AlertInfo  AlertLevel = "INFO"
	AlertWarn  AlertLevel = "WARN"
	AlertError AlertLevel = "ERROR"
)

// AlertLevels lists the levels, least severe first.
var AlertLevels = []AlertLevel{AlertInfo, AlertWarn, AlertError}

// ParseAlertLevel maps a severity label onto a level: INFO/WARN/ERROR in
// any case, plus Prometheus' customary names (warning, critical, page).
// Anything else is WARN, so an unlabelled custom rule still alerts.
func ParseAlertLevel(severity string) AlertLevel {
	switch strings.ToLower(strings.TrimSpace(severity)) {
	case "info", "informational", "none":
		return AlertInfo
	case "error", "critical", "page", "fatal":
		return AlertError
	default:
		return AlertWarn
	}
}

// Valid reports whether l is a known level.
func (l AlertLevel) Valid() bool { return l == AlertInfo || l == AlertWarn || l == AlertError }

// AlertState is where an alert instance stands. Prometheus computes firing
// or not; acknowledgement is the operator's, kept beside it.
type AlertState string

const (
	// AlertActive: firing, nobody has acknowledged it yet.
	AlertActive AlertState = "ACTIVE"
	// AlertAcknowledged: still firing, an operator took it (who, when, comment).
	AlertAcknowledged AlertState = "ACKNOWLEDGED"
	// AlertResolved: the condition cleared, or an operator closed it by hand.
	AlertResolved AlertState = "RESOLVED"
)

// Valid reports whether s is a known state.
func (s AlertState) Valid() bool {
	return s == AlertActive || s == AlertAcknowledged || s == AlertResolved
}

// AlertInstance is one firing of one alert (one label set of one rule).
// A resolved instance never reopens: a new firing is a new instance.
type AlertInstance struct {
	ID          int64
	Fingerprint string // hash of the label set; at most one open instance each
	Rule        string // alertname
	RuleID      int64  // custom rule id; 0 for shipped and file rules
	Tenant      string // "" = platform-wide
	Node        string // host the labels name, "" when none
	Level       AlertLevel
	State       AlertState
	Labels      map[string]string
	Annotations map[string]string
	Value       float64
	Silenced    bool // a silence matched when it opened: no notification was sent
	ActiveAt    time.Time
	FiredAt     time.Time
	AckedAt     *time.Time
	AckedBy     string
	AckComment  string
	ResolvedAt  *time.Time
	ResolvedBy  string // "" when the condition cleared by itself
	Resolution  string // why: "condition cleared", an operator's reason, …
	UpdatedAt   time.Time
}

// AlertEvent is one line of an instance's history.
type AlertEvent struct {
	ID      int64
	AlertID int64
	State   AlertState // the state entered
	Actor   string     // "system" for the engine
	Comment string
	At      time.Time
}

// AlertFilter narrows ListAlerts. Zero fields are ignored.
type AlertFilter struct {
	States []AlertState
	Levels []AlertLevel
	Rule   string
	Node   string
	Tenant *string // nil = every tenant; "" = platform-wide only
	// Scope, when set, keeps only what a caller below operator may see.
	Scope *AlertScope
	Since *time.Time
	Until *time.Time // fired before
	Page  Page
}

// AlertScope is what a caller outside the cluster-wide roles sees of the
// alerts: those of Tenants, and platform-wide ones (no tenant) about one
// of Nodes, the nodes dedicated to those tenants.
type AlertScope struct {
	Tenants []string
	Nodes   []string
}

// Sees reports whether the scope shows a.
func (s *AlertScope) Sees(a *AlertInstance) bool {
	if s == nil {
		return true
	}
	if a.Tenant != "" {
		return slices.Contains(s.Tenants, a.Tenant)
	}
	return a.Node != "" && slices.Contains(s.Nodes, a.Node)
}

// AlertRule is a custom rule stored through the API (shipped rules live in
// files). Expr is PromQL; For and KeepFiringFor are Prometheus' fields.
type AlertRule struct {
	ID            int64
	Tenant        string
	Name          string // alertname: [a-zA-Z_][a-zA-Z0-9_]*
	Expr          string
	For           time.Duration
	KeepFiringFor time.Duration
	Level         AlertLevel
	Labels        map[string]string
	Annotations   map[string]string
	Enabled       bool
	CreatedBy     string
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

var ruleName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// Limits on custom rules; validation messages quote them.
const (
	MaxRuleExprLen     = 4096
	MaxRuleTemplateLen = 2048 // one annotation or label value
	MaxRuleLabels      = 32
)

// Validate checks the fields the store can check (the PromQL itself is
// parsed by the alert engine before saving).
func (r *AlertRule) Validate() error {
	switch {
	case !ruleName.MatchString(r.Name):
		return InvalidCode("alert_rule_name", []string{"pattern", ruleName.String()}, "name must match %s", ruleName)
	case strings.TrimSpace(r.Expr) == "":
		return InvalidCode("alert_rule_expr_required", nil, "expr is required")
	case len(r.Expr) > MaxRuleExprLen:
		return InvalidCode("alert_rule_expr_too_long", []string{"max", strconv.Itoa(MaxRuleExprLen)}, "expr is longer than %d bytes", MaxRuleExprLen)
	case r.For < 0 || r.KeepFiringFor < 0:
		return InvalidCode("alert_rule_negative_duration", nil, "for and keep_firing_for must not be negative")
	case !r.Level.Valid():
		return InvalidCode("alert_rule_level", nil, "level must be INFO, WARN or ERROR")
	case len(r.Labels)+len(r.Annotations) > MaxRuleLabels:
		return InvalidCode("alert_rule_too_many_labels", []string{"max", strconv.Itoa(MaxRuleLabels)}, "at most %d labels and annotations", MaxRuleLabels)
	}
	for k, v := range r.Labels {
		if !ruleName.MatchString(k) {
			return InvalidCode("alert_rule_label_name", []string{"name", k, "pattern", ruleName.String()}, "label name %q must match %s", k, ruleName)
		}
		if len(v) > MaxRuleTemplateLen {
			return InvalidCode("alert_rule_label_too_long", []string{"name", k, "max", strconv.Itoa(MaxRuleTemplateLen)}, "label %s is longer than %d bytes", k, MaxRuleTemplateLen)
		}
	}
	for k, v := range r.Annotations {
		if !ruleName.MatchString(k) {
			return InvalidCode("alert_rule_annotation_name", []string{"name", k, "pattern", ruleName.String()}, "annotation name %q must match %s", k, ruleName)
		}
		if len(v) > MaxRuleTemplateLen {
			return InvalidCode("alert_rule_template_too_long", []string{"name", k, "max", strconv.Itoa(MaxRuleTemplateLen)}, "annotation %s is longer than %d bytes (oversize template)", k, MaxRuleTemplateLen)
		}
	}
	return nil
}

// MatchOp is a silence matcher's operator, as in Alertmanager.
type MatchOp string

const (
	MatchEqual     MatchOp = "="
	MatchNotEqual  MatchOp = "!="
	MatchRegexp    MatchOp = "=~"
	MatchNotRegexp MatchOp = "!~"
)

// LabelMatcher is one condition of a silence.
type LabelMatcher struct {
	Name  string  `json:"name"`
	Op    MatchOp `json:"op"`
	Value string  `json:"value"`
}

// Matches reports whether labels satisfy m. Regexps are anchored, as in
// Alertmanager; an invalid one matches nothing.
func (m LabelMatcher) Matches(labels map[string]string) bool {
	v := labels[m.Name]
	switch m.Op {
	case MatchEqual:
		return v == m.Value
	case MatchNotEqual:
		return v != m.Value
	case MatchRegexp, MatchNotRegexp:
		re, err := regexp.Compile("^(?:" + m.Value + ")$")
		if err != nil {
			return false
		}
		return re.MatchString(v) == (m.Op == MatchRegexp)
	}
	return false
}

// Silence mutes notifications for alerts whose labels match every matcher
// while StartsAt ≤ t < EndsAt. Silenced alerts are still stored and shown.
type Silence struct {
	ID        int64
	Tenant    string
	Matchers  []LabelMatcher
	StartsAt  time.Time
	EndsAt    time.Time
	Comment   string
	CreatedBy string
	CreatedAt time.Time
}

// Validate checks the matchers and the window.
func (s *Silence) Validate() error {
	if len(s.Matchers) == 0 {
		return InvalidCode("silence_no_matcher", nil, "a silence needs at least one matcher")
	}
	for _, m := range s.Matchers {
		if m.Name == "" {
			return InvalidCode("silence_matcher_name", nil, "matcher name is required")
		}
		switch m.Op {
		case MatchEqual, MatchNotEqual:
		case MatchRegexp, MatchNotRegexp:
			if _, err := regexp.Compile(m.Value); err != nil {
				return InvalidCode("silence_matcher_regexp", []string{"name", m.Name, "detail", err.Error()}, "matcher %s: %v", m.Name, err)
			}
		default:
			return InvalidCode("silence_matcher_op", nil, "matcher op must be =, !=, =~ or !~")
		}
	}
	if !s.EndsAt.After(s.StartsAt) {
		return InvalidCode("silence_window", nil, "ends_at must be after starts_at")
	}
	return nil
}

// Active reports whether s mutes labels at t.
func (s *Silence) Active(labels map[string]string, t time.Time) bool {
	if t.Before(s.StartsAt) || !t.Before(s.EndsAt) {
		return false
	}
	for _, m := range s.Matchers {
		if !m.Matches(labels) {
			return false
		}
	}
	return true
}

// Channel types the notifier knows.
const (
	ChannelAlertmanager = "alertmanager"
	ChannelWebhook      = "webhook"
	ChannelDingTalk     = "dingtalk"
	ChannelWeCom        = "wecom"
	ChannelFeishu       = "feishu"
	ChannelEmail        = "email"
)

// ChannelTypes lists them.
var ChannelTypes = []string{ChannelAlertmanager, ChannelWebhook, ChannelDingTalk, ChannelWeCom, ChannelFeishu, ChannelEmail}

// NotifyChannel is a notification receiver with its routing: it gets the
// alerts of Levels (empty = all) of Tenant ("" = every tenant).
type NotifyChannel struct {
	ID      int64
	Name    string
	Type    string
	Config  map[string]string // url, secret, smtp host, to, … per type
	Levels  []AlertLevel
	Tenant  string
	Enabled bool
	// SendResolved: also notify when an alert resolves.
	SendResolved bool
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// Routes reports whether the channel receives a.
func (c *NotifyChannel) Routes(a *AlertInstance) bool {
	if !c.Enabled || (c.Tenant != "" && c.Tenant != a.Tenant) {
		return false
	}
	if len(c.Levels) == 0 {
		return true
	}
	for _, l := range c.Levels {
		if l == a.Level {
			return true
		}
	}
	return false
}

// Validate checks the type and levels (the notifier checks the config).
func (c *NotifyChannel) Validate() error {
	if strings.TrimSpace(c.Name) == "" || len(c.Name) > 128 {
		return InvalidCode("channel_name", nil, "name is required (at most 128 characters)")
	}
	known := false
	for _, t := range ChannelTypes {
		known = known || t == c.Type
	}
	if !known {
		return InvalidCode("channel_unknown_type", []string{"type", c.Type, "types", strings.Join(ChannelTypes, ", ")},
			"unknown channel type %q (one of %s)", c.Type, strings.Join(ChannelTypes, ", "))
	}
	for _, l := range c.Levels {
		if !l.Valid() {
			return InvalidCode("channel_level", []string{"level", string(l)}, "level %q must be INFO, WARN or ERROR", l)
		}
	}
	return nil
}

// Notification kinds.
const (
	NotifyFiring   = "firing"
	NotifyResolved = "resolved"
)

// Notification states in the outbox.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed" // gave up after the last retry
)

// Notification is one outbox row: deliver alert AlertID's Kind message to
// ChannelID. Rows are written in the same transaction as the alert change,
// so nothing is lost while a receiver is down.
type Notification struct {
	ID          int64
	ChannelID   int64
	AlertID     int64
	Kind        string
	Status      string
	Attempts    int
	NextAttempt time.Time
	LastError   string
	CreatedAt   time.Time
	DeliveredAt *time.Time
}

// NotificationFilter narrows ListNotifications.
type NotificationFilter struct {
	AlertID   int64
	ChannelID int64
	Status    string
	Page      Page
}

// AlertStats summarises instances that fired in a window.
type AlertStats struct {
	Total    int            `json:"total"`
	Open     int            `json:"open"`
	ByLevel  map[string]int `json:"by_level"`
	ByState  map[string]int `json:"by_state"`
	ByRule   map[string]int `json:"by_rule"`
	ByNode   map[string]int `json:"by_node"`
	ByDay    []DayCount     `json:"by_day"`
	Acked    int            `json:"acked"`
	Resolved int            `json:"resolved"`
	// Mean seconds from firing to acknowledgement / resolution, over the
	// instances that got there (0 when none did).
	MeanAckSeconds     float64 `json:"mean_ack_seconds"`
	MeanResolveSeconds float64 `json:"mean_resolve_seconds"`
}

// DayCount is the number of instances fired on one UTC day.
type DayCount struct {
	Day   string `json:"day"` // 2006-01-02
	Count int    `json:"count"`
}

// ComputeAlertStats aggregates instances (both stores share it).
func ComputeAlertStats(rows []*AlertInstance) *AlertStats {
	st := &AlertStats{ByLevel: map[string]int{}, ByState: map[string]int{}, ByRule: map[string]int{}, ByNode: map[string]int{}}
	days := map[string]int{}
	var ackSum, resSum float64
	for _, a := range rows {
		st.Total++
		st.ByLevel[string(a.Level)]++
		st.ByState[string(a.State)]++
		st.ByRule[a.Rule]++
		if a.Node != "" {
			st.ByNode[a.Node]++
		}
		days[a.FiredAt.UTC().Format(time.DateOnly)]++
		if a.State != AlertResolved {
			st.Open++
		}
		if a.AckedAt != nil {
			st.Acked++
			ackSum += a.AckedAt.Sub(a.FiredAt).Seconds()
		}
		if a.ResolvedAt != nil {
			st.Resolved++
			resSum += a.ResolvedAt.Sub(a.FiredAt).Seconds()
		}
	}
	if st.Acked > 0 {
		st.MeanAckSeconds = ackSum / float64(st.Acked)
	}
	if st.Resolved > 0 {
		st.MeanResolveSeconds = resSum / float64(st.Resolved)
	}
	for d, n := range days {
		st.ByDay = append(st.ByDay, DayCount{Day: d, Count: n})
	}
	sort.Slice(st.ByDay, func(i, j int) bool { return st.ByDay[i].Day < st.ByDay[j].Day })
	return st
}

// AlertStore persists custom rules, alert instances and their history,
// silences, notification channels and the notification outbox. Errors
// follow Store's contract (ErrNotFound, ErrConflict, ErrInvalid).
type AlertStore interface {
	CreateAlertRule(ctx context.Context, r *AlertRule) error // ErrConflict: (tenant, name) taken
	GetAlertRule(ctx context.Context, id int64) (*AlertRule, error)
	ListAlertRules(ctx context.Context) ([]*AlertRule, error)
	UpdateAlertRule(ctx context.Context, r *AlertRule) error
	DeleteAlertRule(ctx context.Context, id int64) error

	// OpenAlert stores a firing instance as ACTIVE, with the outbox rows
	// for notify, unless an open (ACTIVE or ACKNOWLEDGED) instance with
	// the same fingerprint exists: then it returns that one and created
	// false, and queues nothing.
	OpenAlert(ctx context.Context, a *AlertInstance, notify []int64) (cur *AlertInstance, created bool, err error)
	// AckAlert moves an ACTIVE instance to ACKNOWLEDGED; ErrConflict otherwise.
	AckAlert(ctx context.Context, id int64, by, comment string, at time.Time) (*AlertInstance, error)
	// ResolveAlert closes an open instance (by "" = the condition cleared)
	// and queues notify; ErrConflict when it is already RESOLVED.
	ResolveAlert(ctx context.Context, id int64, by, reason string, at time.Time, notify []int64) (*AlertInstance, error)
	GetAlert(ctx context.Context, id int64) (*AlertInstance, error)
	ListAlerts(ctx context.Context, f AlertFilter) ([]*AlertInstance, int, error) // newest first
	ListAlertEvents(ctx context.Context, alertID int64) ([]*AlertEvent, error)
	// AlertStats aggregates the instances that fired in [since, until).
	AlertStats(ctx context.Context, f AlertFilter) (*AlertStats, error) // Tenant, Scope, Since and Until of f

	CreateSilence(ctx context.Context, s *Silence) error
	ListSilences(ctx context.Context) ([]*Silence, error) // newest first
	// ExpireSilence ends a silence now (EndsAt = at) if it ends later.
	ExpireSilence(ctx context.Context, id int64, at time.Time) error

	CreateChannel(ctx context.Context, c *NotifyChannel) error // ErrConflict: name taken
	GetChannel(ctx context.Context, id int64) (*NotifyChannel, error)
	ListChannels(ctx context.Context) ([]*NotifyChannel, error)
	UpdateChannel(ctx context.Context, c *NotifyChannel) error
	DeleteChannel(ctx context.Context, id int64) error

	// EnqueueNotification adds one outbox row (tests, "send a test").
	EnqueueNotification(ctx context.Context, n *Notification) error
	// DueNotifications returns up to limit pending rows due at now, oldest first.
	DueNotifications(ctx context.Context, now time.Time, limit int) ([]*Notification, error)
	// MarkNotification records a delivery attempt: delivered, or failed
	// with errText and the next attempt (final = give up).
	MarkNotification(ctx context.Context, id int64, delivered bool, errText string, next time.Time, final bool, at time.Time) error
	ListNotifications(ctx context.Context, f NotificationFilter) ([]*Notification, int, error) // newest first
}
