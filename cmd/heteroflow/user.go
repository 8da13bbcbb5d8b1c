package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/spf13/cobra"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/auth"
	"github.com/heteroflow/heteroflow/controlplane/server"
	"github.com/heteroflow/heteroflow/controlplane/storeopen"
)

// The user command works on the server machine, directly on the store the
// server's configuration names: it is the way back in when every
// administrator is locked out.
func init() {
	user := &cobra.Command{
		Use:   "user",
		Short: "Manage accounts on the server machine (direct store access) / 在服务器本机管理账户(直接访问存储)",
	}
	unlock := &cobra.Command{
		Use:   "unlock USERNAME",
		Short: "Lift a login lockout / 解除登录锁定",
		Long: `Clear USERNAME's failed-login count, lock and lockout history in the store named by the
server configuration (--config, HETEROFLOW_* variables, --db, --data-dir). Run it on the server
machine as the account that owns the data directory.

清除 USERNAME 的登录失败计数、锁定与锁定历史。存储由服务器配置决定(--config、HETEROFLOW_* 环境变量、
--db、--data-dir)。请在服务器本机、以数据目录的属主运行。`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path, _ := cmd.Flags().GetString(server.FlagConfig)
			cfg, err := server.Load(path, os.Getenv)
			if err != nil {
				return err
			}
			if err := server.ApplyFlags(cmd.Flags(), &cfg); err != nil {
				return err
			}
			// Opening an embedded database that is not there would create
			// an empty one (in ./data when --data-dir is forgotten) and then
			// answer "not found" for every user: name the real mistake.
			if tgt, err := storeopen.Parse(cfg.DB, cfg.DataDir); err == nil && tgt.Kind == storeopen.KindSQLite {
				if _, err := os.Stat(tgt.Path); err != nil {
					return fmt.Errorf("no HeteroFlow database at %s: give the server's --data-dir (or --db, --config) / %s 处没有 HeteroFlow 数据库：请指定服务器的 --data-dir（或 --db、--config）",
						tgt.Path, tgt.Path)
				}
			}
			ctx := context.Background()
			store, err := storeopen.Open(ctx, cfg.DB, cfg.DataDir, slog.New(slog.DiscardHandler))
			if err != nil {
				return fmt.Errorf("open store / 打开存储失败: %w", err)
			}
			defer store.Close()
			u, err := store.GetUserByName(ctx, args[0])
			if errors.Is(err, controlplane.ErrNotFound) {
				return fmt.Errorf("no user %q in %s / 用户 %q 不存在", args[0], cfg.DataDir, args[0])
			}
			if err != nil {
				return fmt.Errorf("user %q / 用户 %q: %w", args[0], args[0], err)
			}
			if _, err := auth.Unlock(ctx, store, u.ID); err != nil {
				return fmt.Errorf("unlock / 解锁失败: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "unlocked %s / 已解锁 %s\n", u.Username, u.Username)
			return nil
		},
	}
	server.RegisterFlags(unlock.Flags())
	user.AddCommand(unlock)
	rootCmd.AddCommand(user)
}
