package alerts

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	"go.yaml.in/yaml/v3"

	"github.com/heteroflow/heteroflow/alerts/rules"
	"github.com/heteroflow/heteroflow/controlplane"
)

// Label names the engine adds to custom rules' alerts.
const (
	LabelRuleID   = "heteroflow_rule_id"
	LabelTenant   = "tenant"
	LabelSeverity = "severity"
)

// Codes of the rule errors the console translates (web/src/i18n/alerts.*.ts).
const (
	CodeInvalidPromQL = "alert_rule_invalid_promql"
	CodeInvalidRule   = "alert_rule_invalid"
	CodeInvalidParam  = "alert_param_invalid"
)

// ruleFile is one source of rule groups: a shipped file, a file of the
// rules directory, or one custom rule.
type ruleFile struct {
	ident  string // shipped/devices.yml, <dir path>, custom/<id>
	origin string // "shipped", "file", "custom"
	groups *rulefmt.RuleGroups
}

func parseRules(ident string, b []byte, p parser.Parser) (*rulefmt.RuleGroups, error) {
	rgs, errs := rulefmt.Parse(b, false, model.UTF8Validation, p, nopLogger)
	if len(errs) > 0 {
		msgs := make([]string, len(errs))
		for i, e := range errs {
			msgs[i] = e.Error()
		}
		return nil, fmt.Errorf("%s: %s", ident, strings.Join(msgs, "; "))
	}
	return rgs, nil
}

// shippedFiles parses the embedded rule files and applies v.
func shippedFiles(v ParamValues, p parser.Parser) ([]ruleFile, map[string]string, error) {
	defaults := map[string]string{}
	var out []ruleFile
	for _, name := range rules.Names {
		b, err := fs.ReadFile(rules.Files, name)
		if err != nil {
			return nil, nil, err
		}
		rgs, err := parseRules("shipped/"+name, b, p)
		if err != nil {
			return nil, nil, err
		}
		d, err := applyParams(rgs, v, p)
		if err != nil {
			return nil, nil, err
		}
		for k, val := range d {
			defaults[k] = val
		}
		out = append(out, ruleFile{ident: "shipped/" + name, origin: "shipped", groups: rgs})
	}
	return out, defaults, nil
}

// dirFiles parses *.yml and *.yaml of dir ("" = none), in name order.
func dirFiles(dir string, p parser.Parser) ([]ruleFile, error) {
	if dir == "" {
		return nil, nil
	}
	var names []string
	for _, pat := range []string{"*.yml", "*.yaml"} {
		m, err := filepath.Glob(filepath.Join(dir, pat))
		if err != nil {
			return nil, err
		}
		names = append(names, m...)
	}
	sort.Strings(names)
	var out []ruleFile
	for _, n := range names {
		if strings.HasSuffix(n, "_test.yml") || strings.HasSuffix(n, "_test.yaml") {
			continue // promtool unit tests beside the rules
		}
		b, err := os.ReadFile(n)
		if err != nil {
			return nil, fmt.Errorf("rules directory: %w", err)
		}
		rgs, err := parseRules(n, b, p)
		if err != nil {
			return nil, err
		}
		out = append(out, ruleFile{ident: n, origin: "file", groups: rgs})
	}
	return out, nil
}

// CustomGroup renders a custom rule as a one-rule Prometheus group: the
// level becomes the severity label, the tenant and rule id labels.
func CustomGroup(r *controlplane.AlertRule) rulefmt.RuleGroups {
	lbl := map[string]string{}
	for k, v := range r.Labels {
		lbl[k] = v
	}
	lbl[LabelSeverity] = string(r.Level)
	if r.Tenant != "" {
		lbl[LabelTenant] = r.Tenant
	}
	if r.ID != 0 {
		lbl[LabelRuleID] = strconv.FormatInt(r.ID, 10)
	}
	return rulefmt.RuleGroups{Groups: []rulefmt.RuleGroup{{
		Name: fmt.Sprintf("custom-%d-%s", r.ID, r.Name),
		Rules: []rulefmt.Rule{{Alert: r.Name, Expr: r.Expr, For: model.Duration(r.For),
			KeepFiringFor: model.Duration(r.KeepFiringFor), Labels: lbl, Annotations: r.Annotations}},
	}}}
}

// ValidateRule checks a custom rule the way Prometheus checks a rule file
// (PromQL parses, templates parse, label names are valid) and returns an
// ErrInvalid naming the problem.
func ValidateRule(r *controlplane.AlertRule) error {
	if err := r.Validate(); err != nil {
		return err
	}
	if _, err := newParser().ParseExpr(r.Expr); err != nil {
		return controlplane.InvalidCode(CodeInvalidPromQL, []string{"detail", err.Error()}, "invalid PromQL in expr: %v", err)
	}
	g := CustomGroup(r)
	b, err := yaml.Marshal(g)
	if err != nil {
		return controlplane.InvalidCode(CodeInvalidRule, []string{"detail", err.Error()}, "%v", err)
	}
	if _, err := parseRules("rule "+r.Name, b, newParser()); err != nil {
		// The expression parsed: what is left is a template or a label.
		return controlplane.InvalidCode(CodeInvalidRule, []string{"detail", err.Error()}, "%v", err)
	}
	return nil
}

func customFiles(ctx context.Context, st controlplane.AlertStore, p parser.Parser) ([]ruleFile, error) {
	list, err := st.ListAlertRules(ctx)
	if err != nil {
		return nil, err
	}
	var out []ruleFile
	for _, r := range list {
		if !r.Enabled {
			continue
		}
		g := CustomGroup(r)
		b, err := yaml.Marshal(g)
		if err != nil {
			return nil, err
		}
		ident := fmt.Sprintf("custom/%d", r.ID)
		rgs, err := parseRules(ident, b, p)
		if err != nil {
			return nil, err // stored rules were validated on save
		}
		out = append(out, ruleFile{ident: ident, origin: "custom", groups: rgs})
	}
	return out, nil
}

func newParser() parser.Parser { return parser.NewParser(parser.Options{}) }

// sourceSignature tells whether the inputs changed since the last load.
func sourceSignature(params string, list []*controlplane.AlertRule) string {
	var b strings.Builder
	b.WriteString(params)
	for _, r := range list {
		fmt.Fprintf(&b, "|%d:%d:%t", r.ID, r.UpdatedAt.UnixNano(), r.Enabled)
	}
	return b.String()
}
