package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/heteroflow/heteroflow/receivers/fakesmi"
)

func init() {
	rootCmd.AddCommand(&cobra.Command{
		Use:   "fakesmi --tool NAME [ARGS…] | fakesmi install --dir DIR --profile FILE --state FILE [--log FILE]",
		Short: "Simulated vendor CLIs for tests and make run / 模拟厂商管理工具（仅用于测试与 make run）",
		Long: `fakesmi prints what a vendor CLI (nvidia-smi, npu-smi, cnmon, …) would print for a simulated
node described by a profile JSON, with utilisation and memory from a state file
($` + fakesmi.EnvProfile + `, $` + fakesmi.EnvState + `, $` + fakesmi.EnvLog + `).
"install" writes wrapper scripts named after the tools; put DIR first on PATH.

fakesmi 按节点画像与状态文件模拟各厂商工具的真实输出；install 生成同名包装脚本，放到 PATH 前面即可模拟节点。`,
		DisableFlagParsing: true,
		SilenceUsage:       true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 && args[0] == "install" {
				return fakesmiInstall(cmd, args[1:])
			}
			if len(args) < 2 || args[0] != "--tool" {
				if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
					return cmd.Help()
				}
				return errors.New("usage: heteroflow fakesmi --tool NAME [ARGS…] / 用法错误")
			}
			p, err := fakesmi.LoadProfile(os.Getenv(fakesmi.EnvProfile))
			if err != nil {
				return fmt.Errorf("%w (set $%s)", err, fakesmi.EnvProfile)
			}
			return fakesmi.Run(cmd.OutOrStdout(), fakesmi.Options{
				Profile: p, StatePath: os.Getenv(fakesmi.EnvState), LogPath: os.Getenv(fakesmi.EnvLog),
				Env: os.Environ(), Stdin: cmd.InOrStdin(),
			}, args[1], args[2:])
		},
	})
}

func fakesmiInstall(cmd *cobra.Command, args []string) error {
	fs := pflag.NewFlagSet("fakesmi install", pflag.ContinueOnError)
	dir := fs.String("dir", "", "directory for the wrapper scripts / 包装脚本目录")
	profile := fs.String("profile", "", "node profile JSON / 节点画像 JSON")
	state := fs.String("state", "", "state file (created when missing) / 状态文件")
	logPath := fs.String("log", "", "invocation log (JSON lines) / 调用日志")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" || *profile == "" || *state == "" {
		return errors.New("fakesmi install needs --dir, --profile and --state / 需要 --dir、--profile、--state")
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("fakesmi install: %w", err)
	}
	written, err := fakesmi.Install(*dir, self, *profile, *state, *logPath)
	if err != nil {
		return err
	}
	for _, w := range written {
		fmt.Fprintln(cmd.OutOrStdout(), w)
	}
	return nil
}
