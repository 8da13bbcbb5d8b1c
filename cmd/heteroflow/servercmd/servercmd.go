// Package servercmd is the `heteroflow server` command as a library: a
// program that imports HeteroFlow builds its own server binary with extra
// scheduler plugins, the way kube-scheduler's app.NewSchedulerCommand(
// app.WithPlugin(...)) works. See scheduler/examples/outoftree for one.
package servercmd

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/heteroflow/heteroflow/controlplane/app"
	"github.com/heteroflow/heteroflow/controlplane/server"
	"github.com/heteroflow/heteroflow/controlplane/tracing"
)

// New returns the server command; opts (app.WithPlugin, …) customise the
// control plane it runs.
func New(version string, opts ...app.Option) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Run the control plane: REST API, console, store / 运行控制平面(API、控制台、存储)",
		Long: `Run the HeteroFlow control plane. The REST API, /health and /metrics (authenticated) listen on --api-addr
(:3333), the web console on --console-addr (:5173). Settings come from defaults, then --config
(YAML), then HETEROFLOW_* environment variables, then flags. On first start the administrator
"admin" is created with HETEROFLOW_ADMIN_PASSWORD, or a generated password printed once.

运行 HeteroFlow 控制平面。API、/health、/metrics 监听 --api-addr(:3333)，控制台监听
--console-addr(:5173)。配置优先级：默认值 < --config(YAML) < HETEROFLOW_* 环境变量 < 命令行参数。
首次启动时创建管理员 admin，密码取自 HETEROFLOW_ADMIN_PASSWORD，否则生成并只打印一次。`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			path, _ := cmd.Flags().GetString(server.FlagConfig)
			cfg, err := server.Load(path, os.Getenv)
			if err != nil {
				return err
			}
			if err := server.ApplyFlags(cmd.Flags(), &cfg); err != nil {
				return err
			}
			if err := cfg.Validate(); err != nil {
				return fmt.Errorf("invalid configuration / 配置无效:\n%w", err)
			}
			// Everything the server writes (database, keys, metrics blocks)
			// is for its own account only: files 0600, directories 0700.
			ownerOnlyFiles()
			log := NewLogger(cfg)
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			stopTracing, err := tracing.StartOTLP(ctx, "heteroflow-server", version)
			if err != nil {
				return err
			}
			defer func() { _ = stopTracing(context.Background()) }()
			return app.Run(ctx, cfg, server.Options{Logger: log, Stderr: cmd.ErrOrStderr(), Version: version}, opts...)
		},
	}
	server.RegisterFlags(cmd.Flags())
	return cmd
}

// NewLogger is the server's structured logger at the configured level and
// format.
func NewLogger(cfg server.Config) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.LogLevel)) // validated: debug|info|warn|error
	opts := &slog.HandlerOptions{Level: level}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, opts))
}
