package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/apitypes"
	"github.com/heteroflow/heteroflow/controlplane/client"
)

func init() {
	var cf clientFlags
	cmd := &cobra.Command{
		Use:   "workflow",
		Short: "Submit and manage workflows (DAGs of tasks) / 提交和管理工作流(任务 DAG)",
	}
	cf.register(cmd)
	cmd.AddCommand(workflowSubmitCmd(&cf, false), workflowSubmitCmd(&cf, true), workflowListCmd(&cf),
		workflowGetCmd(&cf), workflowCancelCmd(&cf), workflowRetryCmd(&cf), workflowResubmitCmd(&cf),
		workflowEventsCmd(&cf))
	rootCmd.AddCommand(cmd)
}

// readDocument reads a workflow file ("-" = standard input).
func readDocument(cmd *cobra.Command, path string) (string, error) {
	var b []byte
	var err error
	if path == "-" {
		b, err = io.ReadAll(io.LimitReader(cmd.InOrStdin(), 1<<20))
	} else {
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return "", fmt.Errorf("read workflow %s: %w / 无法读取工作流文件", path, err)
	}
	return string(b), nil
}

func workflowSubmitCmd(cf *clientFlags, validateOnly bool) *cobra.Command {
	var params []string
	var wait time.Duration
	var key string
	use, short := "submit FILE", "Submit a workflow from a YAML or JSON file (- = stdin) / 提交工作流"
	if validateOnly {
		use, short = "validate FILE", "Validate a workflow file without submitting it / 校验工作流文件"
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Example: `  heteroflow workflow submit train-eval.yaml --param dataset=/shared/data/v2
  heteroflow workflow submit train-eval.yaml --wait 2h`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			doc, err := readDocument(cmd, args[0])
			if err != nil {
				return err
			}
			in := apitypes.WorkflowSubmitJSON{Document: doc}
			if in.Params, err = keyValues("param", params); err != nil {
				return err
			}
			c, err := cf.client()
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if validateOnly {
				p, err := c.ValidateWorkflow(cmd.Context(), in)
				if err != nil {
					return err
				}
				if cf.json {
					return printJSON(out, p)
				}
				fmt.Fprintf(out, "workflow %q is valid: %d steps, %d edges / 校验通过\n", p.Name, len(p.Steps), len(p.Edges))
				return nil
			}
			if key == "" {
				key = client.NewIdempotencyKey()
			}
			w, err := c.SubmitWorkflowOnce(cmd.Context(), in, key)
			if err != nil {
				return err
			}
			if wait > 0 {
				if w, err = waitWorkflow(cmd, c, w.ID, wait); err != nil {
					return err
				}
			}
			switch {
			case cf.json:
				if err := printJSON(out, w); err != nil {
					return err
				}
			case wait > 0:
				printWorkflow(out, w)
			default:
				fmt.Fprintf(out, "workflow %d submitted (%s), %d steps / 已提交\n", w.ID, w.State, len(w.Steps))
			}
			if wait > 0 && w.State != controlplane.WorkflowSucceeded {
				return fmt.Errorf("workflow %d %s: %s / 工作流未成功", w.ID, w.State, w.Reason)
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&params, "param", nil, "parameter override NAME=VALUE, repeatable / 参数覆盖")
	if !validateOnly {
		cmd.Flags().DurationVar(&wait, "wait", 0, "wait up to this long for the end; non-zero exit unless it succeeded / 等待结束")
		cmd.Flags().StringVar(&key, "idempotency-key", "", "Idempotency-Key sent with the submission (default: a random one); running the command again with the same key, file and parameters answers the workflow already created, for 24 h / 幂等键（默认随机生成）：相同键、文件与参数重复执行返回已创建的工作流")
	}
	return cmd
}

// waitWorkflow polls until the workflow ends or d passes.
func waitWorkflow(cmd *cobra.Command, c *client.Client, id int64, d time.Duration) (*apitypes.WorkflowDetailJSON, error) {
	deadline := time.Now().Add(d)
	for {
		w, err := c.GetWorkflow(cmd.Context(), id)
		if err != nil {
			return nil, err
		}
		if w.State.Terminal() {
			return w, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("workflow %d still %s after %s / 等待超时", id, w.State, d)
		}
		select {
		case <-cmd.Context().Done():
			return nil, cmd.Context().Err()
		case <-time.After(time.Second):
		}
	}
}

func workflowListCmd(cf *clientFlags) *cobra.Command {
	var state, q, owner string
	var limit, offset int
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List workflows / 列出工作流",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := listQuery(map[string]string{"state": state, "q": q, "owner": owner}, limit, offset)
			c, err := cf.client()
			if err != nil {
				return err
			}
			l, err := c.ListWorkflows(cmd.Context(), v)
			if err != nil {
				return err
			}
			if cf.json {
				return printJSON(cmd.OutOrStdout(), l)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tNAME / 名称\tSTATE / 状态\tOWNER / 所有者\tRETRIES / 重试\tCREATED / 创建\tREASON / 原因")
			for _, w := range l.Items {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%s\t%s\n", w.ID, w.Name, w.State, w.Owner, w.Generation,
					fmtTime(w.CreatedAt), w.Reason)
			}
			_ = tw.Flush()
			fmt.Fprintf(cmd.OutOrStdout(), "%d of %d / 共 %d\n", len(l.Items), l.Total, l.Total)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&state, "state", "", "states, comma-separated / 状态(逗号分隔)")
	f.StringVar(&q, "q", "", "name contains / 名称包含")
	f.StringVar(&owner, "owner", "", "owner username / 所有者")
	f.IntVar(&limit, "limit", 0, "page size (default 50) / 每页条数")
	f.IntVar(&offset, "offset", 0, "rows to skip / 偏移")
	return cmd
}

func workflowID(arg string) (int64, error) {
	id, err := strconv.ParseInt(arg, 10, 64)
	if err != nil || id < 1 {
		return 0, fmt.Errorf("workflow id must be a positive number, not %q / 工作流 ID 必须是正整数", arg)
	}
	return id, nil
}

// workflowIDCmd builds a subcommand taking one workflow ID.
func workflowIDCmd(cf *clientFlags, use, short string, run func(cmd *cobra.Command, c *client.Client, id int64) error) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := workflowID(args[0])
			if err != nil {
				return err
			}
			c, err := cf.client()
			if err != nil {
				return err
			}
			return run(cmd, c, id)
		},
	}
}

// showWorkflow prints a workflow (or its JSON).
func showWorkflow(cmd *cobra.Command, cf *clientFlags, w *apitypes.WorkflowDetailJSON) error {
	if cf.json {
		return printJSON(cmd.OutOrStdout(), w)
	}
	printWorkflow(cmd.OutOrStdout(), w)
	return nil
}

func printWorkflow(out io.Writer, w *apitypes.WorkflowDetailJSON) {
	fmt.Fprintf(out, "workflow %d %q: %s (retries %d / 重试 %d 次) — %s\n", w.ID, w.Name, w.State, w.Generation, w.Generation, w.Reason)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STEP / 步骤\tSTATE / 状态\tTASK / 任务\tTASK STATE / 任务状态\tEXIT / 退出码\tOUTPUTS / 输出\tREASON / 原因")
	for _, s := range w.Steps {
		task, exit := "-", "-"
		if s.TaskID != 0 {
			task = strconv.FormatInt(s.TaskID, 10)
		}
		if s.ExitCode != nil {
			exit = strconv.Itoa(*s.ExitCode)
		}
		var outs []string
		for k, v := range s.Outputs {
			outs = append(outs, k+"="+v)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, s.State, task, s.TaskState, exit, strings.Join(outs, ","), s.Reason)
	}
	_ = tw.Flush()
}

func workflowGetCmd(cf *clientFlags) *cobra.Command {
	return workflowIDCmd(cf, "get ID", "Show a workflow and its steps / 查看工作流", func(cmd *cobra.Command, c *client.Client, id int64) error {
		w, err := c.GetWorkflow(cmd.Context(), id)
		if err != nil {
			return err
		}
		return showWorkflow(cmd, cf, w)
	})
}

func workflowCancelCmd(cf *clientFlags) *cobra.Command {
	var reason string
	cmd := workflowIDCmd(cf, "cancel ID", "Cancel a workflow and stop its running steps / 取消工作流",
		func(cmd *cobra.Command, c *client.Client, id int64) error {
			w, err := c.CancelWorkflow(cmd.Context(), id, reason)
			if err != nil {
				return err
			}
			return showWorkflow(cmd, cf, w)
		})
	cmd.Flags().StringVar(&reason, "reason", "", "why / 原因")
	return cmd
}

func workflowRetryCmd(cf *clientFlags) *cobra.Command {
	var from string
	cmd := workflowIDCmd(cf, "retry ID", "Retry a failed or cancelled workflow from its failed steps / 从失败步骤重试工作流",
		func(cmd *cobra.Command, c *client.Client, id int64) error {
			w, err := c.RetryWorkflow(cmd.Context(), id, from)
			if err != nil {
				return err
			}
			return showWorkflow(cmd, cf, w)
		})
	cmd.Flags().StringVar(&from, "from", "", "also rerun this step and every step after it / 从该步骤起全部重跑")
	return cmd
}

func workflowResubmitCmd(cf *clientFlags) *cobra.Command {
	return workflowIDCmd(cf, "resubmit ID", "Submit a workflow's spec again as a new workflow / 重新提交工作流",
		func(cmd *cobra.Command, c *client.Client, id int64) error {
			w, err := c.ResubmitWorkflow(cmd.Context(), id)
			if err != nil {
				return err
			}
			return showWorkflow(cmd, cf, w)
		})
}

func workflowEventsCmd(cf *clientFlags) *cobra.Command {
	return workflowIDCmd(cf, "events ID", "A workflow's history / 工作流历史", func(cmd *cobra.Command, c *client.Client, id int64) error {
		evs, err := c.WorkflowEvents(cmd.Context(), id)
		if err != nil {
			return err
		}
		if cf.json {
			return printJSON(cmd.OutOrStdout(), evs)
		}
		tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TIME / 时间\tSTEP / 步骤\tFROM / 原状态\tTO / 新状态\tACTOR / 操作者\tREASON / 原因")
		for _, e := range evs.Items {
			step := e.Step
			if step == "" {
				step = "(workflow)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", fmtTime(e.At), step, e.From, e.To, e.Actor, e.Reason)
		}
		return tw.Flush()
	})
}
