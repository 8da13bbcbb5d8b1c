package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/heteroflow/heteroflow/controlplane/apitypes"
	"github.com/heteroflow/heteroflow/controlplane/client"
)

// `heteroflow cluster` talks to a hub (a server with hub.enabled): its
// member clusters side by side, and tasks it places on the best member.
func init() {
	var cf clientFlags
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Member clusters of a hub, and tasks placed across them / 多集群：成员集群与跨集群任务",
	}
	cf.register(cmd)
	cmd.AddCommand(clusterListCmd(&cf, false), clusterListCmd(&cf, true), clusterRegisterCmd(&cf), clusterGetCmd(&cf),
		clusterRemoveCmd(&cf), clusterSubmitCmd(&cf), clusterTasksCmd(&cf), clusterTaskCmd(&cf), clusterCancelCmd(&cf),
		clusterLogsCmd(&cf), clusterWhyCmd(&cf))
	rootCmd.AddCommand(cmd)
}

// clusterListCmd is `cluster list`, or with refresh `cluster refresh`
// (every member polled now).
func clusterListCmd(cf *clientFlags, refresh bool) *cobra.Command {
	use, short := "list", "Member clusters as last polled: health, nodes, devices, queue / 成员集群（上次轮询）"
	if refresh {
		use, short = "refresh", "Poll every member now, then list them / 立即轮询所有成员并列出"
	}
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := cf.client()
			if err != nil {
				return err
			}
			list := c.ListClusters
			if refresh {
				list = c.RefreshClusters
			}
			l, err := list(cmd.Context())
			if err != nil {
				return err
			}
			if cf.json {
				return printJSON(cmd.OutOrStdout(), l)
			}
			printClusters(cmd.OutOrStdout(), l.Items)
			return nil
		},
	}
}

func printClusters(w io.Writer, cs []apitypes.ClusterJSON) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME / 名称\tSTATUS / 状态\tVERSION / 版本\tNODES / 节点\tDEVICES (FREE) / 设备（空闲）\tQUEUE / 排队\tALERTS / 告警\tPOLLED / 轮询\tURL / 地址")
	for _, c := range cs {
		nodes, devices, queue, alerts := "—", "—", "—", "—"
		if s := c.Summary; s != nil {
			nodes = fmt.Sprintf("%d/%d", s.NodesOnline, s.NodesTotal)
			devices = fmt.Sprintf("%d/%d (%d)", s.DevicesOnline, s.DevicesTotal, s.DevicesFree)
			queue, alerts = strconv.Itoa(s.QueueDepth), strconv.Itoa(s.AlertsFiring)
		}
		polled := "—"
		if c.PolledAt != nil {
			polled = fmtTime(*c.PolledAt)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.ID, c.Name, c.Status, orDash(c.Version), nodes, devices,
			queue, alerts, polled, c.URL)
	}
	_ = tw.Flush()
	if len(cs) == 0 {
		fmt.Fprintln(w, "no member clusters: register one with `heteroflow cluster register` / 尚无成员集群")
	}
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func clusterRegisterCmd(cf *clientFlags) *cobra.Command {
	var in apitypes.ClusterRegisterJSON
	var keyFile, caFile string
	cmd := &cobra.Command{
		Use:   "register --name NAME --url URL --member-key-file FILE|- [--ca-file FILE | --fingerprint SHA256]",
		Short: "Register a member cluster; the hub checks it at once / 注册成员集群（立即校验）",
		Example: `  heteroflow cluster register --name east --url https://east.example.com:3333 --member-key-file east.key
  echo "$EAST_KEY" | heteroflow cluster register --name east --url https://east:3333 --member-key-file - --ca-file east-ca.pem`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if keyFile == "" {
				return fmt.Errorf("--member-key-file is required (the member's admin or operator API key; - reads it from stdin) / 必须指定 --member-key-file")
			}
			key, err := readSecretFile(cmd, keyFile)
			if err != nil {
				return fmt.Errorf("read member key / 读取成员密钥: %w", err)
			}
			in.APIKey = key
			if caFile != "" {
				b, err := os.ReadFile(caFile)
				if err != nil {
					return fmt.Errorf("read CA / 读取 CA: %w", err)
				}
				in.CAPEM = string(b)
			}
			c, err := cf.client()
			if err != nil {
				return err
			}
			out, err := c.RegisterCluster(cmd.Context(), in)
			if err != nil {
				return err
			}
			if cf.json {
				return printJSON(cmd.OutOrStdout(), out)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "cluster %d %q registered (%s, version %s) / 已注册\n", out.ID, out.Name, out.Status, out.Version)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&in.Name, "name", "", "member name: lowercase letters, digits and '-' / 成员名")
	f.StringVar(&in.URL, "url", "", "the member's API address / 成员 API 地址")
	f.StringVar(&keyFile, "member-key-file", "", "file holding the member's admin or operator API key, - = stdin (never on the command line) / 成员 API 密钥文件（- 为标准输入）")
	f.StringVar(&caFile, "ca-file", "", "PEM of the CA that signed the member's certificate, pinned / 固定的成员证书 CA")
	f.StringVar(&in.Fingerprint, "fingerprint", "", "SHA-256 of the member's certificate, pinned / 固定的成员证书指纹")
	return cmd
}

// readSecretFile reads one secret (a key) from a file or, for "-", from
// stdin, without its trailing newline.
func readSecretFile(cmd *cobra.Command, path string) (string, error) {
	var b []byte
	var err error
	if path == "-" {
		b, err = io.ReadAll(io.LimitReader(cmd.InOrStdin(), 64<<10))
	} else {
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return "", err
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", fmt.Errorf("%s is empty / 内容为空", path)
	}
	return s, nil
}

// clusterIDCmd builds a subcommand taking one numeric ID (a member's or a
// forwarded task's, as what names).
func clusterIDCmd(cf *clientFlags, what, use, short string, run func(cmd *cobra.Command, c *client.Client, id int64) error) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil || id < 1 {
				return fmt.Errorf("%s id must be a positive number, not %q / ID 必须是正整数", what, args[0])
			}
			c, err := cf.client()
			if err != nil {
				return err
			}
			return run(cmd, c, id)
		},
	}
}

func clusterGetCmd(cf *clientFlags) *cobra.Command {
	return clusterIDCmd(cf, "cluster", "get ID", "One member cluster / 成员集群详情", func(cmd *cobra.Command, c *client.Client, id int64) error {
		out, err := c.GetCluster(cmd.Context(), id)
		if err != nil {
			return err
		}
		if cf.json {
			return printJSON(cmd.OutOrStdout(), out)
		}
		printClusters(cmd.OutOrStdout(), []apitypes.ClusterJSON{*out})
		if out.LastError != "" {
			fmt.Fprintf(cmd.OutOrStdout(), "last error / 最近错误: %s\n", out.LastError)
		}
		if s := out.Summary; s != nil && len(s.Devices) > 0 {
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "VENDOR / 厂商\tMODEL / 型号\tONLINE/TOTAL / 在线/总数\tFREE / 空闲\tFREE MEMORY MiB / 空闲显存")
			for _, d := range s.Devices {
				fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%d\t%d\n", d.Vendor, d.Model, d.Online, d.Total, d.Free, d.FreeMiB)
			}
			_ = tw.Flush()
		}
		return nil
	})
}

func clusterRemoveCmd(cf *clientFlags) *cobra.Command {
	return clusterIDCmd(cf, "cluster", "remove ID", "Unregister a member (its unfinished forwarded tasks become unknown) / 移除成员集群",
		func(cmd *cobra.Command, c *client.Client, id int64) error {
			if err := c.RemoveCluster(cmd.Context(), id); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "cluster %d removed / 已移除\n", id)
			return nil
		})
}

func clusterSubmitCmd(cf *clientFlags) *cobra.Command {
	var tf taskSpecFlags
	var target, key string
	var among []string
	cmd := &cobra.Command{
		Use:   "submit --name NAME [--cluster auto|MEMBER] [--among A,B] [task flags] [-- COMMAND ARGS...]",
		Short: "Place a task on the best member cluster and forward it / 跨集群提交任务（自动选择最佳成员）",
		Example: `  heteroflow cluster submit --name train --devices 2 --vendor nvidia -- python train.py
  heteroflow cluster submit --name infer --cluster west --devices 1 --compute-percent 50 --memory-mib 20000 -- ./serve`,
		RunE: func(cmd *cobra.Command, args []string) error {
			spec, err := tf.spec(args)
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
			out, err := c.SubmitHubTaskOnce(cmd.Context(), apitypes.HubTaskSubmitJSON{Cluster: target, Clusters: among, Task: spec}, key)
			if err != nil {
				return err
			}
			if cf.json {
				return printJSON(cmd.OutOrStdout(), out)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "hub task %d placed on %s as task %d (%s) / 已提交到成员集群\n", out.ID, out.Cluster, out.MemberTaskID, out.State)
			printScores(cmd.OutOrStdout(), out.Scores)
			return nil
		},
	}
	tf.register(cmd)
	cmd.Flags().StringVar(&target, "cluster", "auto", "auto (the best member) or a member's name / auto 或成员名")
	cmd.Flags().StringVar(&key, "idempotency-key", "", "Idempotency-Key sent with the submission (default: a random one); the same key and flags again answer the task already placed, for 24 h / 幂等键：相同键与参数重复执行返回已放置的任务")
	cmd.Flags().StringSliceVar(&among, "among", nil, "with auto: place on the best of these members only, comma-separated / 仅在这些成员中选择")
	return cmd
}

func printScores(w io.Writer, scores []apitypes.ClusterScoreJSON) {
	if len(scores) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CLUSTER / 集群\tSCORE / 得分\tFITS / 可放置\tMATCHING / 匹配\tQUEUE / 排队\tREASON / 原因")
	for _, s := range scores {
		fmt.Fprintf(tw, "%s\t%.1f\t%d\t%d\t%d\t%s\n", s.Cluster, s.Score, s.Fits, s.Matching, s.QueueDepth, orDash(s.Reason))
	}
	_ = tw.Flush()
}

func clusterTasksCmd(cf *clientFlags) *cobra.Command {
	var member string
	var limit, offset int
	cmd := &cobra.Command{
		Use:   "tasks [--cluster MEMBER]",
		Short: "Tasks the hub placed on members, with their live state / 跨集群任务列表",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := cf.client()
			if err != nil {
				return err
			}
			l, err := c.ListHubTasks(cmd.Context(), listQuery(map[string]string{"cluster": member}, limit, offset))
			if err != nil {
				return err
			}
			if cf.json {
				return printJSON(cmd.OutOrStdout(), l)
			}
			printHubTasks(cmd.OutOrStdout(), l.Items)
			fmt.Fprintf(cmd.OutOrStdout(), "%d of %d / 共 %d\n", len(l.Items), l.Total, l.Total)
			return nil
		},
	}
	cmd.Flags().StringVar(&member, "cluster", "", "only tasks placed on this member / 仅此成员的任务")
	cmd.Flags().IntVar(&limit, "limit", 0, "page size (default 50) / 每页条数")
	cmd.Flags().IntVar(&offset, "offset", 0, "rows to skip / 偏移")
	return cmd
}

func printHubTasks(w io.Writer, ts []apitypes.HubTaskJSON) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME / 名称\tCLUSTER / 集群\tMEMBER TASK / 成员任务\tSTATE / 状态\tOWNER / 所有者\tCREATED / 创建")
	for _, t := range ts {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\t%s\t%s\n", t.ID, t.Name, t.Cluster, t.MemberTaskID, t.State, t.Owner, fmtTime(t.CreatedAt))
	}
	_ = tw.Flush()
}

func clusterTaskCmd(cf *clientFlags) *cobra.Command {
	return clusterIDCmd(cf, "hub task", "task ID", "A forwarded task with its member's live view / 跨集群任务详情",
		func(cmd *cobra.Command, c *client.Client, id int64) error {
			t, err := c.GetHubTask(cmd.Context(), id)
			if err != nil {
				return err
			}
			if cf.json {
				return printJSON(cmd.OutOrStdout(), t)
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "hub task / 跨集群任务 %d: %s on %s as task %d — %s %s\n", t.ID, t.Name, t.Cluster, t.MemberTaskID,
				t.State, orDash(t.Reason))
			if t.Task != nil {
				printTaskDetail(out, t.Task, nil)
			}
			printScores(out, t.Scores)
			return nil
		})
}

func clusterCancelCmd(cf *clientFlags) *cobra.Command {
	return clusterIDCmd(cf, "hub task", "cancel ID", "Cancel a forwarded task on its member / 取消跨集群任务",
		func(cmd *cobra.Command, c *client.Client, id int64) error {
			t, err := c.CancelHubTask(cmd.Context(), id)
			if err != nil {
				return err
			}
			if cf.json {
				return printJSON(cmd.OutOrStdout(), t)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "hub task %d %s on %s / 已取消\n", t.ID, t.State, t.Cluster)
			return nil
		})
}

func clusterLogsCmd(cf *clientFlags) *cobra.Command {
	var stream string
	cmd := clusterIDCmd(cf, "hub task", "logs ID [--stream stdout|stderr]", "Print a forwarded task's output, read from its member / 打印跨集群任务输出",
		func(cmd *cobra.Command, c *client.Client, id int64) error {
			if stream != "stdout" && stream != "stderr" {
				return fmt.Errorf("--stream must be stdout or stderr, not %q / --stream 只能是 stdout 或 stderr", stream)
			}
			read := func(q url.Values) (l taskLogJSON, err error) {
				raw, err := c.HubTaskLogs(cmd.Context(), id, q)
				if err == nil {
					if err = json.Unmarshal(raw, &l); err != nil {
						err = fmt.Errorf("unexpected answer / 无法解析响应: %w", err)
					}
				}
				return l, err
			}
			_, _, err := readLogs(cmd.OutOrStdout(), read, stream, -1, 0)
			return err
		})
	cmd.Flags().StringVar(&stream, "stream", "stdout", "stdout or stderr / 输出流")
	return cmd
}

func clusterWhyCmd(cf *clientFlags) *cobra.Command {
	return clusterIDCmd(cf, "hub task", "why ID", "Why a forwarded task waits on its member / 跨集群任务为何等待",
		func(cmd *cobra.Command, c *client.Client, id int64) error {
			raw, err := c.HubTaskWhy(cmd.Context(), id)
			if err != nil {
				return err
			}
			return printWhyAnswer(cmd.OutOrStdout(), raw, cf.json)
		})
}
