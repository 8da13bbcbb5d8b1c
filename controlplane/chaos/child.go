package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/heteroflow/heteroflow/agent/daemon"
	"github.com/heteroflow/heteroflow/controlplane/app"
	"github.com/heteroflow/heteroflow/controlplane/metricstore"
	"github.com/heteroflow/heteroflow/controlplane/server"
	"github.com/heteroflow/heteroflow/receivers/smi"
)

// Child roles: argv[1] of a process the harness starts from its own
// executable (heteroflow, or a test binary linking this package).
const (
	roleServer = "__heteroflow-chaos-server"
	roleAgent  = "__heteroflow-chaos-agent"
	envChild   = "HETEROFLOW_CHAOS_CHILD" // JSON childSpec
)

type childSpec struct {
	DataDir       string `json:"data_dir"`
	Addr          string `json:"addr"`
	Server        string `json:"server"`
	Token         string `json:"token"`
	AdminPassword string `json:"admin_password"`
	// HA server: PostgreSQL DSN, the shared secret key and the remote
	// metrics store.
	DB        string `json:"db,omitempty"`
	HA        bool   `json:"ha,omitempty"`
	SecretKey string `json:"secret_key,omitempty"`
	WriteURL  string `json:"write_url,omitempty"`
	QueryURL  string `json:"query_url,omitempty"`
}

func init() {
	if len(os.Args) > 1 && (os.Args[1] == roleServer || os.Args[1] == roleAgent) {
		os.Exit(child(os.Args[1]))
	}
}

func child(role string) int {
	var s childSpec
	if err := json.Unmarshal([]byte(os.Getenv(envChild)), &s); err != nil {
		fmt.Fprintln(os.Stderr, "chaos child:", err)
		return 2
	}
	os.Unsetenv(envChild)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	level := slog.LevelError
	if s.HA {
		level = slog.LevelInfo // leader changes are logged at info: the run's evidence
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	switch role {
	case roleServer:
		cfg := server.Defaults()
		cfg.DataDir, cfg.APIAddr, cfg.ConsoleAddr = s.DataDir, s.Addr, ""
		env := map[string]string{server.EnvAdminPassword: s.AdminPassword, server.EnvSecretKey: s.SecretKey}
		if s.HA {
			cfg.DB, cfg.HA.Enabled, cfg.Metrics.Mode = s.DB, true, metricstore.ModeRemote
			cfg.Metrics.Remote.WriteURL, cfg.Metrics.Remote.QueryURL = s.WriteURL, s.QueryURL
		}
		a, err := app.New(ctx, cfg, server.Options{Logger: log, Stderr: io.Discard, Getenv: func(k string) string {
			if v, ok := env[k]; ok {
				return v
			}
			return ""
		}})
		if err != nil {
			fmt.Fprintln(os.Stderr, "chaos server:", err)
			return 1
		}
		if err := a.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "chaos server:", err)
			return 1
		}
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := a.Shutdown(sctx); err != nil {
			fmt.Fprintln(os.Stderr, "chaos server shutdown:", err)
			return 1
		}
		return 0
	default:
		noDevices := func(context.Context, string, ...string) ([]byte, error) { return nil, smi.ErrToolNotFound }
		err := daemon.Run(ctx, daemon.Config{Server: s.Server, Token: s.Token, DataDir: s.DataDir,
			Heartbeat: time.Second, PollWait: 5 * time.Second, Grace: time.Second, Logger: log, SMI: noDevices})
		if err != nil {
			fmt.Fprintln(os.Stderr, "chaos agent:", err)
			return 1
		}
		return 0
	}
}
