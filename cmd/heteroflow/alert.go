package main

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
)

// The alert commands talk to /api/v1/alerts, /alert-rules and
// /alert-silences; they decode only the fields they print.

type alertRow struct {
	ID          int64             `json:"id"`
	Rule        string            `json:"rule"`
	Level       string            `json:"level"`
	State       string            `json:"state"`
	Node        string            `json:"node"`
	Tenant      string            `json:"tenant"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	FiredAt     time.Time         `json:"fired_at"`
	AckedBy     string            `json:"acked_by,omitempty"`
	AckComment  string            `json:"ack_comment,omitempty"`
	ResolvedBy  string            `json:"resolved_by,omitempty"`
	Resolution  string            `json:"resolution,omitempty"`
	Events      []struct {
		State   string    `json:"state"`
		Actor   string    `json:"actor"`
		Comment string    `json:"comment"`
		At      time.Time `json:"at"`
	} `json:"events,omitempty"`
}

type ruleRow struct {
	ID     int64  `json:"id"`
	Origin string `json:"origin"`
	Name   string `json:"name"`
	Level  string `json:"level"`
	Expr   string `json:"expr"`
	For    string `json:"for"`
	State  string `json:"state"`
	Tenant string `json:"tenant"`
}

func init() {
	var cf clientFlags
	cmd := &cobra.Command{
		Use:   "alert",
		Short: "List, acknowledge and resolve alerts; manage alert rules and silences / 告警查询、确认、解决，规则与静默管理",
	}
	cf.register(cmd)
	cmd.AddCommand(alertListCmd(&cf), alertGetCmd(&cf), alertAckCmd(&cf), alertResolveCmd(&cf), alertStatsCmd(&cf),
		alertRulesCmd(&cf), alertRuleCreateCmd(&cf, false), alertRuleCreateCmd(&cf, true), alertRuleDeleteCmd(&cf), alertSilenceCmd(&cf))
	rootCmd.AddCommand(cmd)
}

func summaryText(ann map[string]string) string {
	if s := ann["summary_zh"]; s != "" && ann["summary"] != "" {
		return ann["summary"] + " / " + s
	}
	return ann["summary"] + ann["summary_zh"]
}

func alertListCmd(cf *clientFlags) *cobra.Command {
	var state, level, rule, node, tenant string
	var limit int
	c := &cobra.Command{
		Use:   "list",
		Short: "List alerts, newest first / 列出告警",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := cf.client()
			if err != nil {
				return err
			}
			q := listQuery(map[string]string{"state": strings.ToUpper(state), "level": strings.ToUpper(level), "rule": rule,
				"node": node, "tenant": tenant}, limit, 0)
			var out struct {
				Items []alertRow `json:"items"`
				Total int        `json:"total"`
			}
			if err := c.Do(cmd.Context(), http.MethodGet, "/api/v1/alerts?"+q.Encode(), nil, &out); err != nil {
				return err
			}
			if cf.json {
				return printJSON(cmd.OutOrStdout(), out)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tLEVEL / 级别\tSTATE / 状态\tRULE / 规则\tNODE / 节点\tFIRED / 触发\tSUMMARY / 摘要")
			for _, a := range out.Items {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", a.ID, a.Level, a.State, a.Rule, a.Node, fmtTime(a.FiredAt), summaryText(a.Annotations))
			}
			fmt.Fprintf(tw, "(%d of %d / 共 %d)\n", len(out.Items), out.Total, out.Total)
			return tw.Flush()
		},
	}
	f := c.Flags()
	f.StringVar(&state, "state", "", "ACTIVE, ACKNOWLEDGED, RESOLVED (comma-separated) / 状态")
	f.StringVar(&level, "level", "", "INFO, WARN, ERROR (comma-separated) / 级别")
	f.StringVar(&rule, "rule", "", "rule (alert) name / 规则名")
	f.StringVar(&node, "node", "", "node / 节点")
	f.StringVar(&tenant, "tenant", "", "tenant / 租户")
	f.IntVar(&limit, "limit", 50, "rows (max 1000) / 行数")
	return c
}

func alertIDCmd(cf *clientFlags, use, short string, run func(cmd *cobra.Command, id int64, do func(method, path string, in, out any) error) error) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := taskID(args[0])
			if err != nil {
				return fmt.Errorf("alert id %q must be a positive integer / 告警 ID 必须是正整数", args[0])
			}
			c, err := cf.client()
			if err != nil {
				return err
			}
			return run(cmd, id, func(method, path string, in, out any) error { return c.Do(cmd.Context(), method, path, in, out) })
		},
	}
}

func printAlert(w io.Writer, a *alertRow) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	// Field names in both languages, as `task get` prints them; an empty
	// field is a dash, not a blank that looks like a missing line.
	opt := func(v string) string {
		if v == "" {
			return "—"
		}
		return v
	}
	row := func(k, v string) { fmt.Fprintf(tw, "%s\t%s\n", k, v) }
	row("id / 编号", strconv.FormatInt(a.ID, 10))
	row("rule / 规则", a.Rule)
	row("level / 级别", a.Level)
	row("state / 状态", a.State)
	row("node / 节点", opt(a.Node))
	row("tenant / 租户", opt(a.Tenant))
	row("fired / 触发", fmtTime(a.FiredAt))
	row("summary / 摘要", summaryText(a.Annotations))
	if len(a.Events) > 0 {
		row("history / 记录", "")
	}
	for _, e := range a.Events {
		fmt.Fprintf(tw, "  %s\t%s %s %s\n", fmtTime(e.At), e.State, e.Actor, e.Comment)
	}
	_ = tw.Flush()
}

func alertGetCmd(cf *clientFlags) *cobra.Command {
	return alertIDCmd(cf, "get ID", "Show an alert with its history / 查看告警及处理记录", func(cmd *cobra.Command, id int64, do func(string, string, any, any) error) error {
		var a alertRow
		if err := do(http.MethodGet, fmt.Sprintf("/api/v1/alerts/%d", id), nil, &a); err != nil {
			return err
		}
		if cf.json {
			return printJSON(cmd.OutOrStdout(), a)
		}
		printAlert(cmd.OutOrStdout(), &a)
		return nil
	})
}

func alertAckCmd(cf *clientFlags) *cobra.Command {
	var comment string
	c := alertIDCmd(cf, "ack ID", "Acknowledge an ACTIVE alert / 确认告警", func(cmd *cobra.Command, id int64, do func(string, string, any, any) error) error {
		var a alertRow
		if err := do(http.MethodPost, fmt.Sprintf("/api/v1/alerts/%d/ack", id), map[string]string{"comment": comment}, &a); err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "alert %d %s by %s / 已确认\n", a.ID, a.State, a.AckedBy)
		return nil
	})
	c.Flags().StringVar(&comment, "comment", "", "comment / 备注")
	return c
}

func alertResolveCmd(cf *clientFlags) *cobra.Command {
	var reason string
	c := alertIDCmd(cf, "resolve ID", "Resolve an alert by hand with a reason / 手动解决告警", func(cmd *cobra.Command, id int64, do func(string, string, any, any) error) error {
		if strings.TrimSpace(reason) == "" {
			return fmt.Errorf("--reason is required / 必须填写 --reason")
		}
		var a alertRow
		if err := do(http.MethodPost, fmt.Sprintf("/api/v1/alerts/%d/resolve", id), map[string]string{"reason": reason}, &a); err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "alert %d %s by %s / 已解决\n", a.ID, a.State, a.ResolvedBy)
		return nil
	})
	c.Flags().StringVar(&reason, "reason", "", "why it is resolved / 解决原因")
	return c
}

func alertStatsCmd(cf *clientFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "stats",
		Short: "Alert statistics of the last 30 days / 最近 30 天告警统计",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := cf.client()
			if err != nil {
				return err
			}
			var st map[string]any
			if err := c.Do(cmd.Context(), http.MethodGet, "/api/v1/alerts/stats", nil, &st); err != nil {
				return err
			}
			return printJSON(cmd.OutOrStdout(), st)
		},
	}
}

func alertRulesCmd(cf *clientFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "rules",
		Short: "List alert rules (built-in, rules directory, custom) / 列出告警规则",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := cf.client()
			if err != nil {
				return err
			}
			var out struct {
				Items []ruleRow `json:"items"`
			}
			if err := c.Do(cmd.Context(), http.MethodGet, "/api/v1/alert-rules", nil, &out); err != nil {
				return err
			}
			if cf.json {
				return printJSON(cmd.OutOrStdout(), out)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tORIGIN / 来源\tNAME / 名称\tLEVEL / 级别\tFOR / 持续\tSTATE / 状态\tEXPR / 表达式")
			for _, r := range out.Items {
				id := "-"
				if r.ID != 0 {
					id = fmt.Sprint(r.ID)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", id, r.Origin, r.Name, r.Level, r.For, r.State, r.Expr)
			}
			return tw.Flush()
		},
	}
}

// alertRuleCreateCmd is rule-create, or rule-test (evaluate now, save nothing).
func alertRuleCreateCmd(cf *clientFlags, test bool) *cobra.Command {
	var name, expr, level, forD, tenant, summary, summaryZh string
	use, short := "rule-create", "Create a custom alert rule (PromQL) / 创建自定义告警规则"
	if test {
		use, short = "rule-test", "Evaluate a rule against live data now without saving it / 立即测试规则（不保存）"
	}
	c := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := cf.client()
			if err != nil {
				return err
			}
			body := map[string]any{"name": name, "expr": expr, "level": strings.ToUpper(level), "for": forD, "tenant": tenant,
				"annotations": map[string]string{}}
			ann := body["annotations"].(map[string]string)
			if summary != "" {
				ann["summary"] = summary
			}
			if summaryZh != "" {
				ann["summary_zh"] = summaryZh
			}
			if test {
				var out struct {
					Alerts []struct {
						Labels map[string]string `json:"labels"`
						State  string            `json:"state"`
						Value  float64           `json:"value"`
					} `json:"alerts"`
				}
				if err := c.Do(cmd.Context(), http.MethodPost, "/api/v1/alert-rules/test", body, &out); err != nil {
					return err
				}
				if cf.json {
					return printJSON(cmd.OutOrStdout(), out)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%d alert(s) now / 当前 %d 条告警\n", len(out.Alerts), len(out.Alerts))
				for _, a := range out.Alerts {
					fmt.Fprintf(cmd.OutOrStdout(), "  %s %v = %g\n", a.State, a.Labels, a.Value)
				}
				return nil
			}
			var r ruleRow
			if err := c.Do(cmd.Context(), http.MethodPost, "/api/v1/alert-rules", body, &r); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "rule %d %s created / 已创建\n", r.ID, r.Name)
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&name, "name", "", "alert name, e.g. GPUBusy / 告警名")
	f.StringVar(&expr, "expr", "", "PromQL expression / PromQL 表达式")
	f.StringVar(&level, "level", "WARN", "INFO, WARN or ERROR / 级别")
	f.StringVar(&forD, "for", "", "how long the condition must hold, e.g. 5m / 持续时间")
	f.StringVar(&tenant, "tenant", "", "owner tenant (default: yours) / 所属租户")
	f.StringVar(&summary, "summary", "", "summary template (English) / 英文摘要")
	f.StringVar(&summaryZh, "summary-zh", "", "summary template (中文) / 中文摘要")
	_ = c.MarkFlagRequired("name")
	_ = c.MarkFlagRequired("expr")
	return c
}

func alertRuleDeleteCmd(cf *clientFlags) *cobra.Command {
	return alertIDCmd(cf, "rule-delete ID", "Delete a custom alert rule / 删除自定义告警规则", func(cmd *cobra.Command, id int64, do func(string, string, any, any) error) error {
		if err := do(http.MethodDelete, fmt.Sprintf("/api/v1/alert-rules/%d", id), nil, nil); err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "rule %d deleted / 已删除\n", id)
		return nil
	})
}

func alertSilenceCmd(cf *clientFlags) *cobra.Command {
	var matchers []string
	var dur time.Duration
	var comment string
	c := &cobra.Command{
		Use:   "silence",
		Short: "Silence matching alerts for a while, e.g. --match host_name=gpu-1 --for 2h / 静默告警",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var ms []map[string]string
			for _, m := range matchers {
				var op string
				for _, o := range []string{"=~", "!~", "!=", "="} {
					if strings.Contains(m, o) {
						op = o
						break
					}
				}
				name, value, ok := strings.Cut(m, op)
				if op == "" || !ok || name == "" {
					return fmt.Errorf("--match %q must be label=value, label!=value, label=~re or label!~re / 匹配条件格式错误", m)
				}
				ms = append(ms, map[string]string{"name": strings.TrimSpace(name), "op": op, "value": strings.TrimSpace(value)})
			}
			if len(ms) == 0 {
				return fmt.Errorf("at least one --match is required / 至少需要一个 --match")
			}
			if dur <= 0 {
				return fmt.Errorf("--for must be a positive duration, e.g. 2h, not %s / --for 必须为正的时长", dur)
			}
			c, err := cf.client()
			if err != nil {
				return err
			}
			var out struct {
				ID     int64     `json:"id"`
				EndsAt time.Time `json:"ends_at"`
			}
			body := map[string]any{"matchers": ms, "ends_at": time.Now().Add(dur).UTC(), "comment": comment}
			if err := c.Do(cmd.Context(), http.MethodPost, "/api/v1/alert-silences", body, &out); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "silence %d until %s / 静默至 %s\n", out.ID, fmtTime(out.EndsAt), fmtTime(out.EndsAt))
			return nil
		},
	}
	c.Flags().StringArrayVar(&matchers, "match", nil, "label matcher (repeatable) / 标签匹配（可重复）")
	c.Flags().DurationVar(&dur, "for", 2*time.Hour, "how long / 时长")
	c.Flags().StringVar(&comment, "comment", "", "comment / 备注")
	return c
}
