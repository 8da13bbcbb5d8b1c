package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/heteroflow/heteroflow/controlplane/chaos"
)

func init() {
	var o chaos.Options
	cmd := &cobra.Command{
		Use:   "chaos --dir DIR [--tasks N --sim-agents N --real-agents N ...]",
		Short: "Soak-and-chaos run with an exact accounting / 浸泡与混沌测试（精确核对）",
		Long: `Run a soak-and-chaos test on this machine: a real server process (SQLite in DIR), simulated agents
in this process speaking the agent protocol, real agent processes (in network namespaces the run creates
when root and ip are available), kill -9 of the server and of agents, and network partitions. It ends with
an exact accounting (every task terminal with a reason, none lost, none run twice at once, allocation
ledger equal to the live allocations, no panic, no goroutine or file-descriptor leak), printed as JSON;
the exit status is non-zero when a check fails. Bounded by --tasks and --timeout.

在本机运行浸泡与混沌测试：真实服务器进程（DIR 中的 SQLite）、进程内的模拟代理、真实代理进程（以 root 运行且有 ip
命令时放在本次运行创建的网络命名空间中），对服务器和代理执行 kill -9 并制造网络分区。结束时精确核对（每个任务均已结束并
有原因、无丢失、无同时重复运行、分配账本等于在用分配、无 panic、无 goroutine 或文件描述符泄漏），以 JSON 输出；
任一检查失败时退出码非零。由 --tasks 和 --timeout 限定。`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.Dir == "" {
				return fmt.Errorf("--dir is required / 需要 --dir")
			}
			if o.Tasks < 1 || o.SimAgents < 0 || o.RealAgents < 0 {
				return fmt.Errorf("--tasks must be ≥ 1 and agent counts ≥ 0 / 参数无效")
			}
			if _, err := exec.LookPath("ip"); err != nil || os.Geteuid() != 0 {
				o.Netns = false
			}
			o.Logger = slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelInfo}))
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			rep, err := chaos.Run(ctx, o)
			if rep != nil {
				b, _ := json.MarshalIndent(rep, "", "  ")
				fmt.Fprintln(cmd.OutOrStdout(), string(b))
			}
			if err != nil {
				return err
			}
			if err := rep.OK(); err != nil {
				return fmt.Errorf("accounting failed / 核对失败: %w", err)
			}
			fmt.Fprintln(cmd.ErrOrStderr(), "accounting exact / 核对无误")
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Dir, "dir", "", "working folder (server data, agent data, logs) / 工作目录")
	f.IntVar(&o.Tasks, "tasks", 100000, "tasks to submit / 提交的任务数")
	f.IntVar(&o.SimAgents, "sim-agents", 200, "simulated agents in this process / 模拟代理数")
	f.IntVar(&o.RealAgents, "real-agents", 3, "real agent processes / 真实代理进程数")
	f.IntVar(&o.GPUsPerAgent, "gpus-per-agent", 8, "simulated GPUs per simulated agent / 每个模拟代理的 GPU 数")
	f.IntVar(&o.CPUPercent, "cpu-percent", 5, "percent of tasks without devices (real agents run these) / 无设备任务百分比")
	f.IntVar(&o.MaxRetries, "max-retries", 2, "retries per task / 每任务重试次数")
	f.IntVar(&o.FailPercent, "fail-percent", 5, "percent of simulated runs that exit 1 / 模拟失败百分比")
	f.DurationVar(&o.TaskMin, "task-min", 50*time.Millisecond, "shortest simulated task / 最短模拟任务时长")
	f.DurationVar(&o.TaskMax, "task-max", 2*time.Second, "longest simulated task / 最长模拟任务时长")
	f.DurationVar(&o.Heartbeat, "heartbeat", 2*time.Second, "simulated agents' heartbeat period / 模拟代理心跳周期")
	f.IntVar(&o.ServerKills, "server-kills", 3, "kill -9 of the server / 服务器 kill -9 次数")
	f.IntVar(&o.AgentKills, "agent-kills", 20, "kill -9 of agents / 代理 kill -9 次数")
	f.IntVar(&o.Partitions, "partitions", 10, "network partitions / 网络分区次数")
	f.DurationVar(&o.PartitionFor, "partition-for", 5*time.Second, "partition length / 每次分区时长")
	f.BoolVar(&o.Netns, "netns", true, "real agents in network namespaces (root and ip needed) / 真实代理放入网络命名空间")
	f.DurationVar(&o.Timeout, "timeout", 2*time.Hour, "bound on the whole run / 总时长上限")
	f.IntVar(&o.SubmitWorkers, "submit-workers", 8, "concurrent submitters / 并发提交数")
	f.IntVar(&o.Servers, "servers", 1, "HA: server processes on --postgres with the remote metrics store; server kills then kill the scheduler leader / 高可用：服务器进程数（需 --postgres 与远程指标存储），kill 针对调度主节点")
	f.StringVar(&o.PostgresDSN, "postgres", "", "PostgreSQL DSN of an HA run / 高可用运行的 PostgreSQL DSN")
	f.StringVar(&o.RemoteWriteURL, "remote-write-url", "", "shared metrics store's remote-write URL (HA), e.g. http://vm:8428/api/v1/write / 共享指标存储写入地址")
	f.StringVar(&o.RemoteQueryURL, "remote-query-url", "", "shared metrics store's query API (HA), e.g. http://vm:8428 / 共享指标存储查询地址")
	rootCmd.AddCommand(cmd)
}
