package main

import (
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/client"
	"github.com/heteroflow/heteroflow/controlplane/httpapi"
)

func init() {
	var cf clientFlags
	cmd := &cobra.Command{
		Use:   "task",
		Short: "Submit, list, inspect and cancel tasks / 提交、查询、取消任务",
	}
	cf.register(cmd)
	cmd.AddCommand(taskSubmitCmd(&cf), taskListCmd(&cf), taskGetCmd(&cf), taskCancelCmd(&cf), taskWhyCmd(&cf))
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

func taskSubmitCmd(cf *clientFlags) *cobra.Command {
	var s httpapi.TaskSpecJSON
	var env, labels []string
	var qos string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "submit --name NAME [flags] [-- COMMAND ARGS...]",
		Short: "Submit a task / 提交任务",
		Example: `  heteroflow task submit --name train --devices 2 --memory-mib 16000 --compute-percent 50 \
    --qos silver --vendor nvidia --label team=ml -- python train.py --epochs 3
  heteroflow task submit --name infer --image registry/infer:1 --arg --port=8080`,
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			s.Command = args
			s.QoS = controlplane.QoS(qos)
			s.TimeoutSeconds = int(timeout / time.Second)
			if s.Env, err = keyValues("env", env); err != nil {
				return err
			}
			if s.Labels, err = keyValues("label", labels); err != nil {
				return err
			}
			c, err := cf.client()
			if err != nil {
				return err
			}
			t, err := c.SubmitTask(cmd.Context(), s)
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
	f := cmd.Flags()
	f.StringVar(&s.Name, "name", "", "task name (required) / 任务名")
	f.StringVar(&s.Image, "image", "", "container image (or give a command after --) / 镜像")
	f.StringArrayVar(&s.Args, "arg", nil, "image argument, repeatable / 镜像参数")
	f.StringArrayVar(&env, "env", nil, "environment KEY=VALUE, repeatable / 环境变量")
	f.IntVar(&s.DeviceCount, "devices", 0, "accelerators wanted, 0 = CPU only / 加速卡数量")
	f.IntVar(&s.MemoryMiB, "memory-mib", 0, "device memory per device (MiB) / 每卡显存")
	f.IntVar(&s.ComputePercent, "compute-percent", 0, "compute share per device, 10–100 / 每卡算力百分比")
	f.StringVar(&s.Vendor, "vendor", "", "vendor filter, e.g. nvidia, ascend / 厂商")
	f.StringArrayVar(&s.Models, "model", nil, "allowed model, repeatable / 允许的型号")
	f.StringVar(&qos, "qos", "", "gold | silver | bronze (default bronze) / 服务等级")
	f.IntVar(&s.Priority, "priority", 0, "0–1000, higher first / 优先级")
	f.DurationVar(&timeout, "timeout", 0, "run time limit, e.g. 2h / 超时")
	f.IntVar(&s.MaxRetries, "max-retries", 0, "retries after failure / 最大重试次数")
	f.StringArrayVar(&labels, "label", nil, "label KEY=VALUE, repeatable / 标签")
	f.StringVar(&s.Tenant, "tenant", "", "tenant / 租户")
	f.StringVar(&s.Project, "project", "", "project / 项目")
	f.IntVar(&s.CPUMilli, "cpu-milli", 0, "host CPU in millicores / CPU 毫核")
	f.IntVar(&s.HostMemoryMiB, "host-memory-mib", 0, "host memory (MiB) / 主机内存")
	f.BoolVar(&s.RDMA, "rdma", false, "needs RDMA / 需要 RDMA")
	f.StringVar(&s.Gang, "gang", "", "gang group name / 组调度名")
	f.IntVar(&s.GangSize, "gang-size", 0, "members of the gang / 组大小")
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
			v := url.Values{}
			for k, val := range map[string]string{"state": state, "owner": owner, "label": label, "since": since,
				"until": until, "q": q, "tenant": tenant} {
				if val != "" {
					v.Set(k, val)
				}
			}
			if limit > 0 {
				v.Set("limit", strconv.Itoa(limit))
			}
			if offset > 0 {
				v.Set("offset", strconv.Itoa(offset))
			}
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

func printTasks(w io.Writer, ts []httpapi.TaskJSON) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tSTATE\tOWNER\tDEVICES\tQOS\tCREATED")
	for _, t := range ts {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%s\t%s\n", t.ID, t.Name, t.State, t.Owner, t.DeviceCount, t.QoS,
			t.CreatedAt.Local().Format(time.DateTime))
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

func taskGetCmd(cf *clientFlags) *cobra.Command {
	return taskIDCmd(cf, "get ID", "Show a task / 查看任务", func(cmd *cobra.Command, c *client.Client, id int64) error {
		t, err := c.GetTask(cmd.Context(), id)
		if err != nil {
			return err
		}
		if cf.json {
			return printJSON(cmd.OutOrStdout(), t)
		}
		printTasks(cmd.OutOrStdout(), []httpapi.TaskJSON{*t})
		if t.Reason != "" {
			fmt.Fprintf(cmd.OutOrStdout(), "reason / 原因: %s\n", t.Reason)
		}
		return nil
	})
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
