package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
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
		Use:   "task",
		Short: "Submit, list, inspect and cancel tasks / 提交、查询、取消任务",
	}
	cf.register(cmd)
	cmd.AddCommand(taskSubmitCmd(&cf), taskListCmd(&cf), taskGetCmd(&cf), taskCancelCmd(&cf), taskWhyCmd(&cf), taskLogsCmd(&cf))
	rootCmd.AddCommand(cmd)
}

// keyValues parses repeated k=v flags.
func keyValues(flag string, items []string) (map[string]string, error) {
	if len(items) == 0 {
		return nil, nil
	}
	m := make(map[string]string, len(items))
	for _, it := range items {
		k, v, ok := strings.Cut(it, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--%s %q must be KEY=VALUE / 格式应为 KEY=VALUE", flag, it)
		}
		m[k] = v
	}
	return m, nil
}

// taskSpecFlags are the flags that describe a task, shared by `task
// submit` and `cluster submit`.
type taskSpecFlags struct {
	s           apitypes.TaskSpecJSON
	env, labels []string
	qos         string
	timeout     time.Duration
}

func (t *taskSpecFlags) register(cmd *cobra.Command) {
	f, s := cmd.Flags(), &t.s
	f.StringVar(&s.Name, "name", "", "task name (required) / 任务名")
	f.StringVar(&s.Image, "image", "", "container image (or give a command after --) / 镜像")
	f.StringArrayVar(&s.Args, "arg", nil, "image argument, repeatable / 镜像参数")
	f.StringArrayVar(&t.env, "env", nil, "environment KEY=VALUE, repeatable / 环境变量")
	f.IntVar(&s.DeviceCount, "devices", 0, "accelerators wanted, 0 = CPU only / 加速卡数量")
	f.IntVar(&s.MemoryMiB, "memory-mib", 0, "device memory per device (MiB) / 每卡显存")
	f.IntVar(&s.ComputePercent, "compute-percent", 0, "compute share per device, 10–100 / 每卡算力百分比")
	f.StringVar(&s.Vendor, "vendor", "", "vendor filter, e.g. nvidia, ascend / 厂商")
	f.StringArrayVar(&s.Models, "model", nil, "allowed model, repeatable / 允许的型号")
	f.StringVar(&t.qos, "qos", "", "gold | silver | bronze (default bronze) / 服务等级")
	f.IntVar(&s.Priority, "priority", 0, "0–1000, higher first / 优先级")
	f.DurationVar(&t.timeout, "timeout", 0, "run time limit, e.g. 2h / 超时")
	f.IntVar(&s.MaxRetries, "max-retries", 0, "retries after failure / 最大重试次数")
	f.StringArrayVar(&t.labels, "label", nil, "label KEY=VALUE, repeatable / 标签")
	f.StringVar(&s.Tenant, "tenant", "", "tenant / 租户")
	f.StringVar(&s.Project, "project", "", "project / 项目")
	f.IntVar(&s.CPUMilli, "cpu-milli", 0, "host CPU in millicores / CPU 毫核")
	f.IntVar(&s.HostMemoryMiB, "host-memory-mib", 0, "host memory (MiB) / 主机内存")
	f.BoolVar(&s.RDMA, "rdma", false, "needs RDMA / 需要 RDMA")
	f.StringVar(&s.Gang, "gang", "", "gang group name / 组调度名")
	f.IntVar(&s.GangSize, "gang-size", 0, "members of the gang / 组大小")
	f.BoolVar(&s.WaitForNodes, "wait-for-nodes", false, "queue even if no node of the cluster can ever hold the task (else refused) / 即使当前集群无节点能容纳也排队等待新节点")
}

// spec is the task the flags describe, running command (may be empty when
// --image is given).
func (t *taskSpecFlags) spec(command []string) (apitypes.TaskSpecJSON, error) {
	var err error
	s := t.s
	s.Command = command
	s.QoS = controlplane.QoS(t.qos)
	s.TimeoutSeconds = int(t.timeout / time.Second)
	if s.Env, err = keyValues("env", t.env); err != nil {
		return s, err
	}
	if s.Labels, err = keyValues("label", t.labels); err != nil {
		return s, err
	}
	return s, nil
}

func taskSubmitCmd(cf *clientFlags) *cobra.Command {
	var tf taskSpecFlags
	var key string
	cmd := &cobra.Command{
		Use:   "submit --name NAME [flags] [-- COMMAND ARGS...]",
		Short: "Submit a task / 提交任务",
		Example: `  heteroflow task submit --name train --devices 2 --memory-mib 16000 --compute-percent 50 \
    --qos silver --vendor nvidia --label team=ml -- python train.py --epochs 3
  heteroflow task submit --name infer --image registry/infer:1 --arg --port=8080`,
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := tf.spec(args)
			if err != nil {
				return err
			}
			c, err := cf.client()
			if err != nil {
				return err
			}
			if key == "" {
				key = client.NewIdempotencyKey()
			}
			t, err := c.SubmitTaskOnce(cmd.Context(), s, key)
			if err != nil {
				return err
			}
			if cf.json {
				return printJSON(cmd.OutOrStdout(), t)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "task %d submitted (%s) / 已提交\n", t.ID, t.State)
			return nil
		},
	}
	tf.register(cmd)
	cmd.Flags().StringVar(&key, "idempotency-key", "", "Idempotency-Key sent with the submission (default: a random one); running the command again with the same key and flags answers the task already created, for 24 h / 幂等键（默认随机生成）：相同键与参数重复执行返回已创建的任务")
	return cmd
}

func taskListCmd(cf *clientFlags) *cobra.Command {
	var state, owner, label, since, until, q, tenant string
	var limit, offset int
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List tasks / 列出任务",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := listQuery(map[string]string{"state": state, "owner": owner, "label": label, "since": since,
				"until": until, "q": q, "tenant": tenant}, limit, offset)
			c, err := cf.client()
			if err != nil {
				return err
			}
			l, err := c.ListTasks(cmd.Context(), v)
			if err != nil {
				return err
			}
			if cf.json {
				return printJSON(cmd.OutOrStdout(), l)
			}
			printTasks(cmd.OutOrStdout(), l.Items)
			fmt.Fprintf(cmd.OutOrStdout(), "%d of %d / 共 %d\n", len(l.Items), l.Total, l.Total)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&state, "state", "", "states, comma-separated / 状态(逗号分隔)")
	f.StringVar(&owner, "owner", "", "owner username / 所有者")
	f.StringVar(&label, "label", "", "KEY=VALUE[,…] / 标签")
	f.StringVar(&since, "since", "", "created at or after (RFC 3339) / 起始时间")
	f.StringVar(&until, "until", "", "created before (RFC 3339) / 截止时间")
	f.StringVar(&q, "q", "", "name contains / 名称包含")
	f.StringVar(&tenant, "tenant", "", "tenant / 租户")
	f.IntVar(&limit, "limit", 0, "page size (default 50) / 每页条数")
	f.IntVar(&offset, "offset", 0, "rows to skip / 偏移")
	return cmd
}

func printTasks(w io.Writer, ts []apitypes.TaskJSON) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME / 名称\tSTATE / 状态\tOWNER / 所有者\tDEVICES / 设备\tQOS\tCREATED / 创建")
	for _, t := range ts {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%s\t%s\n", t.ID, t.Name, t.State, t.Owner, t.DeviceCount, t.QoS,
			fmtTime(t.CreatedAt))
	}
	_ = tw.Flush()
}

func taskID(arg string) (int64, error) {
	id, err := strconv.ParseInt(arg, 10, 64)
	if err != nil || id < 1 {
		return 0, fmt.Errorf("task id must be a positive number, not %q / 任务 ID 必须是正整数", arg)
	}
	return id, nil
}

// taskIDCmd builds a subcommand taking one task ID: it parses the ID,
// connects with the saved credentials and hands both to run.
func taskIDCmd(cf *clientFlags, use, short string,
	run func(cmd *cobra.Command, c *client.Client, id int64) error,
) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := taskID(args[0])
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

// fmtTime is the one way the CLI prints an instant: RFC 3339 in the local
// time zone, to the second (JSON output keeps the server's UTC values).
func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.Local().Format(time.RFC3339)
}

// fmtTimeString re-formats an RFC 3339 string from the server with fmtTime.
func fmtTimeString(s string) string {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	return fmtTime(t)
}

// sliceView is one device of GET /api/v1/slices with its slices.
type sliceView struct {
	Node     string `json:"node"`
	Hostname string `json:"hostname"`
	Index    int    `json:"index"`
	Vendor   string `json:"vendor"`
	Model    string `json:"model"`
	Memory   int64  `json:"memory_mib"`
	Slices   []struct {
		TaskID         int64  `json:"task_id"`
		QoS            string `json:"qos"`
		MemoryMiB      int64  `json:"memory_mib"`
		ComputePercent int    `json:"compute_percent"`
		Isolation      string `json:"isolation"`
		Profile        string `json:"profile"`
	} `json:"slices"`
}

// placement describes where a task runs: its live slices from the ledger,
// or else the "scheduled" event's text (the ledger is released at the end).
func placement(ctx context.Context, c *client.Client, t *apitypes.TaskJSON) []string {
	var out []string
	var sl struct{ Items []sliceView }
	if err := c.Do(ctx, http.MethodGet, "/api/v1/slices", nil, &sl); err == nil {
		for _, d := range sl.Items {
			for _, s := range d.Slices {
				if s.TaskID != t.ID {
					continue
				}
				line := fmt.Sprintf("%s device #%d %s %s: %d/%d MiB, %d%% compute, %s, %s", d.Node, d.Index, d.Vendor, d.Model,
					s.MemoryMiB, d.Memory, s.ComputePercent, s.QoS, s.Isolation)
				if s.Profile != "" {
					line += " (" + s.Profile + ")"
				}
				out = append(out, line)
			}
		}
	}
	if len(out) > 0 {
		return out
	}
	var ev struct{ Items []apitypes.TaskEventJSON }
	if err := c.Do(ctx, http.MethodGet, fmt.Sprintf("/api/v1/tasks/%d/events", t.ID), nil, &ev); err == nil {
		for i := len(ev.Items) - 1; i >= 0; i-- {
			if ev.Items[i].To == controlplane.TaskScheduled && ev.Items[i].Reason != "" {
				return []string{ev.Items[i].Reason}
			}
		}
	}
	return nil
}

func taskGetCmd(cf *clientFlags) *cobra.Command {
	return taskIDCmd(cf, "get ID", "Show a task: state, node, placement, times / 查看任务：状态、节点、放置、时间", func(cmd *cobra.Command, c *client.Client, id int64) error {
		t, err := c.GetTask(cmd.Context(), id)
		if err != nil {
			return err
		}
		if cf.json {
			return printJSON(cmd.OutOrStdout(), t)
		}
		printTaskDetail(cmd.OutOrStdout(), t, placement(cmd.Context(), c, t))
		return nil
	})
}

func printTaskDetail(out io.Writer, t *apitypes.TaskJSON, place []string) {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	row := func(k, v string) { fmt.Fprintf(tw, "%s\t%s\n", k, v) }
	opt := func(v string) string {
		if v == "" {
			return "—"
		}
		return v
	}
	row("id / 编号", strconv.FormatInt(t.ID, 10))
	row("name / 名称", t.Name)
	row("state / 状态", string(t.State))
	row("owner / 所有者", t.Owner)
	// A container task runs its image with the command (if any) and then
	// the args, as the agent starts it: show every part, the image on its
	// own line, so no part of what runs is hidden.
	if t.Image != "" {
		row("image / 镜像", t.Image)
	}
	row("command / 命令", opt(strings.Join(quoteArgs(append(append([]string{}, t.Command...), t.Args...)), " ")))
	qos := string(t.QoS)
	row("resources / 资源", fmt.Sprintf("%d device(s), %d MiB, %d%% compute, QoS %s", t.DeviceCount, t.MemoryMiB, t.ComputePercent, opt(qos)))
	row("node / 节点", opt(t.NodeID))
	if len(place) == 0 {
		row("placement / 放置", "—")
	}
	for i, p := range place {
		k := ""
		if i == 0 {
			k = "placement / 放置"
		}
		row(k, p)
	}
	row("attempt / 尝试", strconv.Itoa(t.Attempt))
	if t.ExitCode != nil {
		row("exit code / 退出码", strconv.Itoa(*t.ExitCode))
	}
	row("reason / 原因", opt(t.Reason))
	row("created / 创建", fmtTime(t.CreatedAt))
	if t.StartedAt != nil {
		row("started / 开始", fmtTime(*t.StartedAt))
	}
	if t.FinishedAt != nil {
		row("finished / 结束", fmtTime(*t.FinishedAt))
	}
	_ = tw.Flush()
}

// quoteArgs shell-quotes each argument that needs it, so a printed command
// can be pasted back.
func quoteArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = shellQuote(a)
	}
	return out
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_@%+=:,./-", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func taskCancelCmd(cf *clientFlags) *cobra.Command {
	return taskIDCmd(cf, "cancel ID", "Cancel a task / 取消任务", func(cmd *cobra.Command, c *client.Client, id int64) error {
		t, err := c.CancelTask(cmd.Context(), id)
		if err != nil {
			return err
		}
		if cf.json {
			return printJSON(cmd.OutOrStdout(), t)
		}
		fmt.Fprintf(cmd.OutOrStdout(), "task %d %s / 已取消\n", t.ID, t.State)
		return nil
	})
}

// taskLogJSON is GET /api/v1/tasks/{id}/logs.
type taskLogJSON struct {
	Attempt int    `json:"attempt"`
	Offset  int64  `json:"offset"`
	Next    int64  `json:"next"`
	Data    string `json:"data"`
}

func taskLogsCmd(cf *clientFlags) *cobra.Command {
	var follow bool
	var stream string
	var attempt int
	var interval time.Duration
	cmd := taskIDCmd(cf, "logs ID [--follow] [--stream stdout|stderr]",
		"Print a task's output; --follow keeps printing until it ends / 打印任务输出，--follow 持续跟随直到结束",
		func(cmd *cobra.Command, c *client.Client, id int64) error {
			if stream != "stdout" && stream != "stderr" {
				return fmt.Errorf("--stream must be stdout or stderr, not %q / --stream 只能是 stdout 或 stderr", stream)
			}
			if interval < 100*time.Millisecond {
				return fmt.Errorf("--interval must be at least 100ms / --interval 至少 100ms")
			}
			out := &countingWriter{w: cmd.OutOrStdout()}
			if err := followLogs(cmd.Context(), c, out, id, stream, attempt, follow, interval); err != nil {
				return err
			}
			if out.n == 0 && stream == "stdout" {
				hintStderr(cmd, c, id, attempt)
			}
			return nil
		})
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing new output until the task ends / 持续输出直到任务结束")
	cmd.Flags().StringVar(&stream, "stream", "stdout", "stdout or stderr / 输出流")
	cmd.Flags().IntVar(&attempt, "attempt", -1, "attempt number (default: the current one) / 第几次尝试(默认当前)")
	cmd.Flags().DurationVar(&interval, "interval", time.Second, "poll period with --follow / 跟随时的轮询间隔")
	return cmd
}

// countingWriter counts what the logs command printed.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// hintStderr tells, on stderr, that a task with no standard output wrote
// to its standard error: a failed task often says why only there, and an
// empty answer with status 0 reads as "no logs at all".
func hintStderr(cmd *cobra.Command, c *client.Client, id int64, attempt int) {
	q := url.Values{"stream": {"stderr"}}
	if attempt >= 0 {
		q.Set("attempt", strconv.Itoa(attempt))
	}
	var l taskLogJSON
	if c.Do(cmd.Context(), http.MethodGet, fmt.Sprintf("/api/v1/tasks/%d/logs?%s", id, q.Encode()), nil, &l) != nil || l.Data == "" {
		return
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "(no standard output; the task wrote to standard error: heteroflow task logs %d --stream stderr) / (标准输出为空；任务的标准错误有内容：heteroflow task logs %d --stream stderr)\n", id, id)
}

func followLogs(ctx context.Context, c *client.Client, out io.Writer, id int64, stream string, attempt int, follow bool, every time.Duration) error {
	read := func(q url.Values) (l taskLogJSON, err error) {
		return l, c.Do(ctx, http.MethodGet, fmt.Sprintf("/api/v1/tasks/%d/logs?%s", id, q.Encode()), nil, &l)
	}
	var offset int64
	for {
		var err error
		if attempt, offset, err = readLogs(out, read, stream, attempt, offset); err != nil {
			return err
		}
		if !follow {
			return nil
		}
		t, err := c.GetTask(ctx, id)
		if err != nil {
			return err
		}
		if t.State.Terminal() || t.Attempt != attempt {
			// One last read: output shipped just before the end.
			follow = false
			continue
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(every):
		}
	}
}

// readLogs prints what a task's log holds now from offset (the server
// answers in chunks) and returns the attempt it read (the current one when
// attempt < 0, so that a follower stays on it) and where it stopped.
func readLogs(out io.Writer, read func(url.Values) (taskLogJSON, error), stream string, attempt int, offset int64) (int, int64, error) {
	for {
		q := url.Values{"stream": {stream}, "offset": {strconv.FormatInt(offset, 10)}}
		if attempt >= 0 {
			q.Set("attempt", strconv.Itoa(attempt))
		}
		l, err := read(q)
		if err != nil {
			return attempt, offset, err
		}
		if attempt < 0 {
			attempt = l.Attempt
		}
		if l.Data == "" {
			return attempt, offset, nil
		}
		if _, err := io.WriteString(out, l.Data); err != nil {
			return attempt, offset, err
		}
		offset = l.Next
	}
}
