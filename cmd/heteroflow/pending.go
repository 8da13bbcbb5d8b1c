package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"

	"github.com/spf13/cobra"

	"github.com/heteroflow/heteroflow/controlplane/client"
)

// whyJSON is GET /api/v1/tasks/{id}/why.
type whyJSON struct {
	TaskID       int64  `json:"task_id"`
	State        string `json:"state"`
	Reason       string `json:"reason"`
	Pending      bool   `json:"pending"`
	Preemptions  int    `json:"preemptions"`
	FailedCycles int    `json:"failed_cycles"`
	LastAttempt  *struct {
		At            string         `json:"at"`
		Summary       string         `json:"summary"`
		ByReason      map[string]int `json:"by_reason"`
		Nodes         []struct{ Node, Plugin, Reason string }
		Quota         string  `json:"quota"`
		NextAttemptAt *string `json:"next_attempt_at"`
		Gang          *struct {
			Name           string
			Reserved, Size int
		} `json:"gang"`
		Preemption *struct {
			Mode    string  `json:"mode"`
			Node    string  `json:"node"`
			Victims []int64 `json:"victims"`
		} `json:"preemption"`
	} `json:"last_attempt"`
}

func taskWhyCmd(cf *clientFlags) *cobra.Command {
	return taskIDCmd(cf, "why ID",
		"Why a task is pending: per-node reasons of its last scheduling attempt / 任务为何等待：上次调度各节点的原因",
		func(cmd *cobra.Command, c *client.Client, id int64) error {
			var raw json.RawMessage
			if err := c.Do(cmd.Context(), http.MethodGet, fmt.Sprintf("/api/v1/tasks/%d/why", id), nil, &raw); err != nil {
				return err
			}
			return printWhyAnswer(cmd.OutOrStdout(), raw, cf.json)
		})
}

// printWhyAnswer prints a why answer (a task's, or a member's passed
// through the hub) as it came with --json, else as text.
func printWhyAnswer(out io.Writer, raw json.RawMessage, asJSON bool) error {
	if asJSON {
		_, err := out.Write(append(raw, '\n'))
		return err
	}
	var w whyJSON
	if err := json.Unmarshal(raw, &w); err != nil {
		return fmt.Errorf("unexpected answer / 无法解析响应: %w", err)
	}
	printWhy(out, &w)
	return nil
}

func printWhy(out io.Writer, w *whyJSON) {
	// No dangling dash for a task without a reason (a running one).
	head := fmt.Sprintf("task / 任务 %d: %s", w.TaskID, w.State)
	if w.Reason != "" {
		head += " — " + w.Reason
	}
	if !w.Pending {
		head += " (not waiting to be scheduled / 未在等待调度)"
	}
	fmt.Fprintln(out, head)
	la := w.LastAttempt
	if la == nil {
		fmt.Fprintln(out, "no failed scheduling attempt recorded / 没有失败的调度记录")
		return
	}
	fmt.Fprintf(out, "last attempt / 上次尝试 %s: %s\n", fmtTimeString(la.At), la.Summary)
	if la.Quota != "" {
		fmt.Fprintf(out, "quota / 配额: %s\n", la.Quota)
	}
	if la.Gang != nil {
		fmt.Fprintf(out, "gang / 组调度 %s: %d/%d placed / 已放置\n", la.Gang.Name, la.Gang.Reserved, la.Gang.Size)
	}
	if p := la.Preemption; p != nil && len(p.Victims) > 0 {
		fmt.Fprintf(out, "preempting / 抢占中 (%s) on %s: tasks %v\n", p.Mode, p.Node, p.Victims)
	}
	sort.Slice(la.Nodes, func(i, j int) bool { return la.Nodes[i].Node < la.Nodes[j].Node })
	for _, n := range la.Nodes {
		fmt.Fprintf(out, "  %-24s %-12s %s\n", n.Node, n.Plugin, n.Reason)
	}
	if la.NextAttemptAt != nil {
		fmt.Fprintf(out, "next attempt / 下次尝试: %s\n", fmtTimeString(*la.NextAttemptAt))
	}
	fmt.Fprintf(out, "preemptions / 被抢占次数: %d\n", w.Preemptions)
}
