package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/heteroflow/heteroflow/agent/daemon"
	"github.com/heteroflow/heteroflow/agent/runner"
	"github.com/heteroflow/heteroflow/controlplane/tracing"
	"github.com/heteroflow/heteroflow/receivers/fakesmi"
)

func init() {
	var (
		cfg         daemon.Config
		labels      []string
		serverList  []string
		runAsMap    []string
		noCollector bool
		logLevel    string
	)
	cmd := &cobra.Command{
		Use:   "agent --server URL --token BOOTSTRAP [--data-dir DIR]",
		Short: "Run the node agent / 运行节点代理",
		Long: `Run the HeteroFlow node agent. The first start enrolls the node with a one-time bootstrap
token (created by an administrator: POST /api/v1/bootstrap-tokens or the console's Nodes page) and
stores the node's own credential in DATA_DIR/credentials.json (mode 0600); later starts need only
--server. Over https:// the agent also sends a certificate request for a key it generates locally;
when the server enables mTLS it returns a client certificate, stored with the key in DATA_DIR
(client.crt, client.key, ca.crt, mode 0600) and presented on every call. A self-signed server is
trusted through --ca-file or a pinned --server-fingerprint, never by skipping verification. The agent detects every vendor CLI on PATH, runs the embedded collector, heartbeats,
receives tasks by long-poll and runs them with their devices and isolation.

Tasks are sandboxed: a clean environment (PATH, HOME = the task's working directory, LANG,
USER/LOGNAME, HETEROFLOW_TASK_ID/ATTEMPT/WORK_DIR, --task-env-pass variables, the task's env and
secret_env, the device variables), an unprivileged account (--run-as, --run-as-map; nobody by
default when the agent runs as root; never root without --allow-root-tasks), their own 0700
working directory under DATA_DIR/work, and a container (docker/podman/nerdctl, --env-file,
--user) when the task names an image. Tasks survive an agent restart: the new agent adopts them.

运行 HeteroFlow 节点代理。首次启动用一次性引导令牌注册节点（管理员在控制台“节点”页或
POST /api/v1/bootstrap-tokens 创建），节点凭据保存在 DATA_DIR/credentials.json（权限 0600），
之后只需 --server。使用 https:// 时代理在本机生成私钥并发送证书请求；服务器启用 mTLS 时返回客户端证书，
与私钥一起保存在 DATA_DIR（client.crt、client.key、ca.crt，权限 0600），此后每次请求都出示该证书。
自签名服务器通过 --ca-file 或 --server-fingerprint 指纹信任，绝不跳过校验。代理自动识别各厂商工具、运行内置采集器、发送心跳、长轮询接收并执行任务。
任务在沙箱中运行：干净的环境变量、非特权账户（--run-as、--run-as-map；代理以 root 运行时默认 nobody；
未指定 --allow-root-tasks 绝不以 root 运行）、独立的 0700 工作目录（DATA_DIR/work），指定镜像时在容器中运行。
代理重启后接管仍在运行的任务。`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var level slog.Level
			if err := level.UnmarshalText([]byte(logLevel)); err != nil {
				return fmt.Errorf("--log-level %q: use debug, info, warn or error / 日志级别无效", logLevel)
			}
			cfg.Server = strings.Join(serverList, ",")
			cfg.Labels = map[string]string{}
			for _, l := range labels {
				k, v, ok := strings.Cut(l, "=")
				if !ok || k == "" {
					return fmt.Errorf("--label %q must be key=value / 标签格式应为 key=value", l)
				}
				cfg.Labels[k] = v
			}
			cfg.Accounts = map[string]string{}
			for _, m := range runAsMap {
				k, v, ok := strings.Cut(m, "=")
				if !ok || k == "" || v == "" {
					return fmt.Errorf("--run-as-map %q must be user:NAME=ACCOUNT or tenant:NAME=ACCOUNT / 账户映射格式错误", m)
				}
				cfg.Accounts[k] = v
			}
			if err := cfg.Validate(); err != nil {
				return err
			}
			if err := os.MkdirAll(cfg.DataDir, 0o711); err != nil {
				return fmt.Errorf("data dir / 数据目录: %w", err)
			}
			// The agent's own log: stderr plus a capped file the server can
			// collect remotely (agent-logs).
			logDir := filepath.Join(cfg.DataDir, "logs")
			lf, err := runner.OpenLog(logDir, "agent", 4<<20, 3)
			if err != nil {
				return err
			}
			defer lf.Close()
			cfg.AgentLog, cfg.AgentLogDir = lf, logDir
			cfg.Logger = slog.New(slog.NewTextHandler(io.MultiWriter(cmd.ErrOrStderr(), lf), &slog.HandlerOptions{Level: level}))
			cfg.Collector = !noCollector
			if state := os.Getenv("HETEROFLOW_FAKESMI_STATE"); state != "" {
				cfg.SimulatedLoad = simulatedLoad(state)
			}
			cfg.Version = version
			// Under the Windows service manager the agent answers its stop
			// requests (agent_windows.go); elsewhere SIGINT/SIGTERM stop it.
			return runAgentService(func(ctx context.Context) error {
				stopTracing, err := tracing.StartOTLP(ctx, "heteroflow-agent", version)
				if err != nil {
					return err
				}
				defer func() { _ = stopTracing(context.Background()) }()
				return daemon.Run(ctx, cfg)
			})
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&serverList, "server", splitServers(os.Getenv("HETEROFLOW_SERVER")),
		"server API URL, e.g. http://server:3333; repeatable or a comma list for HA servers, the agent fails over between them / 服务器 API 地址，可重复或逗号分隔（高可用多服务器，自动故障切换） ($HETEROFLOW_SERVER)")
	f.StringVar(&cfg.Token, "token", os.Getenv("HETEROFLOW_TOKEN"), "one-time bootstrap token (first start only) / 一次性引导令牌 ($HETEROFLOW_TOKEN)")
	f.StringVar(&cfg.CAFile, "ca-file", os.Getenv("HETEROFLOW_CA_FILE"), "PEM CA bundle to trust for an https:// server instead of the system roots / 信任的服务器 CA 证书 ($HETEROFLOW_CA_FILE)")
	f.StringVar(&cfg.ServerFingerprint, "server-fingerprint", os.Getenv("HETEROFLOW_SERVER_FINGERPRINT"),
		"SHA-256 of a self-signed server certificate to pin (openssl x509 -fingerprint -sha256) / 固定自签名服务器证书的 SHA-256 指纹 ($HETEROFLOW_SERVER_FINGERPRINT)")
	f.StringVar(&cfg.Name, "name", os.Getenv("HETEROFLOW_NODE_NAME"), "node name at enrollment, default the host name / 节点名(注册时使用，默认主机名) ($HETEROFLOW_NODE_NAME)")
	f.StringVar(&cfg.DataDir, "data-dir", defaultAgentDir(), "credentials, outbox, task logs / 数据目录")
	f.DurationVar(&cfg.Heartbeat, "heartbeat", 10*time.Second, "heartbeat period / 心跳周期")
	f.DurationVar(&cfg.PollWait, "poll-wait", 30*time.Second, "assignment long-poll duration / 长轮询时长")
	f.DurationVar(&cfg.Grace, "kill-grace", 10*time.Second, "SIGTERM→SIGKILL grace for tasks / 终止任务的宽限期")
	f.StringArrayVar(&labels, "label", nil, "node label key=value (repeatable) / 节点标签")
	f.BoolVar(&noCollector, "no-collector", false, "do not run the embedded metrics collector / 不运行内置采集器")
	f.StringVar(&cfg.RunAs, "run-as", os.Getenv("HETEROFLOW_RUN_AS"),
		"local account tasks run as (default: nobody when the agent runs as root) / 任务运行账户（root 运行时默认 nobody）")
	f.StringArrayVar(&runAsMap, "run-as-map", nil,
		"user:NAME=ACCOUNT or tenant:NAME=ACCOUNT: run that user's or tenant's tasks as ACCOUNT (repeatable) / 按用户或租户映射本地账户")
	f.BoolVar(&cfg.AllowRootTasks, "allow-root-tasks", false, "allow tasks to run as root (uid 0) / 允许任务以 root 运行")
	f.StringArrayVar(&cfg.TaskPassEnv, "task-env-pass", nil,
		"agent environment variable tasks receive, e.g. HTTPS_PROXY (repeatable; none by default) / 传给任务的代理环境变量")
	f.StringVar(&cfg.ContainerRuntime, "container-runtime", "",
		"docker, podman, nerdctl or none (default: the first found on PATH) / 容器运行时")
	f.StringVar(&logLevel, "log-level", "info", "debug|info|warn|error / 日志级别")
	rootCmd.AddCommand(cmd)
}

func defaultAgentDir() string {
	if d := os.Getenv("HETEROFLOW_AGENT_DATA_DIR"); d != "" {
		return d
	}
	if os.Geteuid() == 0 {
		return "/var/lib/heteroflow-agent"
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".heteroflow-agent")
	}
	return ".heteroflow-agent"
}

// simulatedLoad makes a node whose vendor CLIs are simulated (fakesmi, as
// `make run` starts them) report the load of its running tasks: the state
// file the simulated CLIs read follows the agent's work. Only this wiring
// links the simulator to the agent; the daemon knows nothing of it.
func simulatedLoad(statePath string) func(map[int]daemon.DeviceLoad) error {
	return func(per map[int]daemon.DeviceLoad) error {
		loads := make(map[int]fakesmi.DeviceState, len(per))
		for i, l := range per {
			loads[i] = fakesmi.DeviceState{UtilizationPercent: l.UtilizationPercent, MemoryUsedMiB: l.MemoryUsedMiB,
				PartitionMemoryUsedMiB: l.PartitionMemoryMiB}
		}
		return fakesmi.SetLoads(statePath, loads)
	}
}
