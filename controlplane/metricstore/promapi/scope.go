package promapi

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// Scope narrows what a caller may select to the series of its tenants —
// those whose "tenant" label names one of Tenants (the scheduler's,
// metering's and the task series) — and the series without a tenant label
// whose "host_name" names one of Nodes (the device and host series of the
// nodes dedicated to those tenants). A scope with neither selects nothing.
//
// It is enforced by label matchers added to every selector of a query, as
// prom-label-proxy does: the engine (or the remote store) never reads a
// series outside the scope, so no function, set operator, regex or
// subquery can reach one. The two kinds of series cannot be one
// conjunction of matchers, so with both a selector becomes the union of
// two disjoint selections: "tenant" is set in one and empty in the other.
type Scope struct {
	Tenants []string
	Nodes   []string
}

// Series labels the scope reads.
const (
	TenantLabel = "tenant"
	HostLabel   = "host_name"
)

// nobody is a tenant label value no series carries (tenant names are
// letters, digits, '.', '_' and '-'): the matcher of an empty scope.
const nobody = "\x00"

// branches are the matcher sets whose union is the scope, at least one.
func (s Scope) branches() [][]*labels.Matcher {
	var out [][]*labels.Matcher
	if len(s.Tenants) > 0 {
		out = append(out, []*labels.Matcher{oneOf(TenantLabel, s.Tenants)})
	}
	if len(s.Nodes) > 0 {
		out = append(out, []*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, TenantLabel, ""), oneOf(HostLabel, s.Nodes)})
	}
	if len(out) == 0 {
		out = append(out, []*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, TenantLabel, nobody)})
	}
	return out
}

// oneOf matches exactly the values (Prometheus anchors the regex).
func oneOf(name string, values []string) *labels.Matcher {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = regexp.QuoteMeta(v)
	}
	return labels.MustNewMatcher(labels.MatchRegexp, name, strings.Join(q, "|"))
}

// MatcherSets returns sets (the match[] of /series and the label APIs)
// narrowed to the scope: each set once per branch; no sets at all stands
// for every series, so the branches themselves.
func (s Scope) MatcherSets(sets [][]*labels.Matcher) [][]*labels.Matcher {
	if len(sets) == 0 {
		return s.branches()
	}
	var out [][]*labels.Matcher
	for _, set := range sets {
		for _, b := range s.branches() {
			out = append(out, withMatchers(set, b))
		}
	}
	return out
}

func withMatchers(set, add []*labels.Matcher) []*labels.Matcher {
	out := make([]*labels.Matcher, 0, len(set)+len(add))
	return append(append(out, set...), add...)
}

// Query parses a PromQL expression and returns it with the scope applied
// to every selector; the result selects nothing outside the scope.
func (s Scope) Query(p parser.Parser, q string) (string, error) {
	e, err := p.ParseExpr(q)
	if err != nil {
		return "", err
	}
	out, err := s.rewrite(e)
	if err != nil {
		return "", err
	}
	return out.String(), nil
}

// rewrite returns e with every selector narrowed. It refuses node types it
// does not know, so a new PromQL construct fails closed.
func (s Scope) rewrite(e parser.Expr) (parser.Expr, error) {
	var err error
	switch n := e.(type) {
	case *parser.VectorSelector:
		return s.union(func(b []*labels.Matcher) parser.Expr { return narrowed(n, b) }), nil
	case *parser.MatrixSelector:
		// Bare range selectors (an instant query's x[5m]) cannot be a union;
		// they keep the first branch, a subset of the scope.
		c := *n
		c.VectorSelector = narrowed(n.VectorSelector.(*parser.VectorSelector), s.branches()[0])
		return &c, nil
	case *parser.Call:
		return s.call(n)
	case *parser.AggregateExpr:
		if n.Expr, err = s.rewrite(n.Expr); err != nil {
			return nil, err
		}
		if n.Param != nil {
			n.Param, err = s.rewrite(n.Param)
		}
		return n, err
	case *parser.BinaryExpr:
		if n.LHS, err = s.rewrite(n.LHS); err != nil {
			return nil, err
		}
		n.RHS, err = s.rewrite(n.RHS)
		return n, err
	case *parser.ParenExpr:
		n.Expr, err = s.rewrite(n.Expr)
		return n, err
	case *parser.UnaryExpr:
		n.Expr, err = s.rewrite(n.Expr)
		return n, err
	case *parser.SubqueryExpr:
		n.Expr, err = s.rewrite(n.Expr)
		return n, err
	case *parser.StepInvariantExpr:
		n.Expr, err = s.rewrite(n.Expr)
		return n, err
	case *parser.NumberLiteral, *parser.StringLiteral:
		return e, nil
	}
	return nil, fmt.Errorf("%T is not supported in a tenant-scoped query", e)
}

// call narrows a function call. A range-vector argument (rate(x[5m])) —
// or timestamp's selector, whose samples' own times it reads — is split
// at the call: f(x{A}[5m]) or f(x{B}[5m]). These functions work series by
// series, so the union of the two calls is the call over the union.
func (s Scope) call(n *parser.Call) (parser.Expr, error) {
	split := -1
	for i, a := range n.Args {
		_, isMatrix := a.(*parser.MatrixSelector)
		_, isVector := a.(*parser.VectorSelector)
		if isMatrix || (isVector && n.Func.Name == "timestamp") {
			split = i
			continue
		}
		r, err := s.rewrite(a)
		if err != nil {
			return nil, err
		}
		n.Args[i] = r
	}
	if split < 0 {
		return n, nil
	}
	arg := n.Args[split]
	return s.union(func(b []*labels.Matcher) parser.Expr {
		c := *n
		c.Args = append(parser.Expressions(nil), n.Args...)
		switch a := arg.(type) {
		case *parser.MatrixSelector:
			m := *a
			m.VectorSelector = narrowed(a.VectorSelector.(*parser.VectorSelector), b)
			c.Args[split] = &m
		case *parser.VectorSelector:
			c.Args[split] = narrowed(a, b)
		}
		return &c
	}), nil
}

// union builds one expression per branch, joined by "or" when there are two.
func (s Scope) union(build func([]*labels.Matcher) parser.Expr) parser.Expr {
	bs := s.branches()
	e := build(bs[0])
	for _, b := range bs[1:] {
		e = &parser.ParenExpr{Expr: &parser.BinaryExpr{Op: parser.LOR, LHS: e, RHS: build(b),
			VectorMatching: &parser.VectorMatching{Card: parser.CardManyToMany}}}
	}
	return e
}

// narrowed is a copy of vs with the branch's matchers added.
func narrowed(vs *parser.VectorSelector, b []*labels.Matcher) *parser.VectorSelector {
	c := *vs
	c.LabelMatchers = withMatchers(vs.LabelMatchers, b)
	return &c
}

// Selector writes a matcher set as a series selector ({a="b",…}), the form
// match[] takes.
func Selector(ms []*labels.Matcher) string {
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = m.String()
	}
	return "{" + strings.Join(parts, ",") + "}"
}
