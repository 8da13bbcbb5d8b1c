package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/heteroflow/heteroflow/controlplane/client"
)

func init() {
	var server, username string
	var fromStdin bool
	cmd := &cobra.Command{
		Use:   "login",
		Short: "Log in and save tokens for the client commands / 登录并保存令牌",
		Long: `Log in to a HeteroFlow server. The password is read from --password-stdin or prompted
without echo; tokens are saved to $XDG_CONFIG_HOME/heteroflow/credentials.json (mode 0600) and
refreshed automatically by the other client commands.

登录 HeteroFlow 服务器。密码从 --password-stdin 读取，或在终端无回显输入；令牌保存到
$XDG_CONFIG_HOME/heteroflow/credentials.json(权限 0600)，其他客户端命令会自动刷新。`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if username == "" {
				u, err := readUsername(cmd, fromStdin)
				if err != nil {
					return err
				}
				username = u
			}
			pw, err := readPassword(cmd, fromStdin)
			if err != nil {
				return err
			}
			c, err := client.New(server, nil)
			if err != nil {
				return err
			}
			cr, err := c.Login(cmd.Context(), username, pw)
			if err != nil {
				return fmt.Errorf("login failed / 登录失败: %w", err)
			}
			path, err := client.DefaultCredentialsPath()
			if err != nil {
				return err
			}
			if err := client.SaveCredentials(path, cr); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Logged in to %s as %s / 已登录 (%s)\n", cr.Server, cr.Username, path)
			return nil
		},
	}
	cmd.Flags().StringVar(&server, "server", defaultServer(), "server URL ($HETEROFLOW_SERVER) / 服务器地址")
	cmd.Flags().StringVar(&username, "username", os.Getenv("HETEROFLOW_USERNAME"), "username ($HETEROFLOW_USERNAME; prompted on a terminal) / 用户名")
	cmd.Flags().BoolVar(&fromStdin, "password-stdin", false, "read the password from stdin / 从标准输入读取密码")
	rootCmd.AddCommand(cmd)
}

// defaultServer is $HETEROFLOW_SERVER or the local API's default address.
func defaultServer() string {
	if s := os.Getenv("HETEROFLOW_SERVER"); s != "" {
		return s
	}
	return "http://localhost:3333"
}

// readUsername prompts on a terminal; elsewhere --username is required
// (stdin may carry the password).
func readUsername(cmd *cobra.Command, passwordOnStdin bool) (string, error) {
	if passwordOnStdin || !term.IsTerminal(int(os.Stdin.Fd())) {
		return "", fmt.Errorf("--username is required when not on a terminal / 非交互模式下需要 --username")
	}
	fmt.Fprint(cmd.ErrOrStderr(), "Username / 用户名: ")
	line, err := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
	if u := strings.TrimSpace(line); u != "" {
		return u, nil
	}
	if err != nil {
		return "", fmt.Errorf("read username: %w", err)
	}
	return "", fmt.Errorf("empty username / 用户名为空")
}

func readPassword(cmd *cobra.Command, fromStdin bool) (string, error) {
	if fromStdin {
		b, err := io.ReadAll(io.LimitReader(cmd.InOrStdin(), 4096))
		if err != nil {
			return "", fmt.Errorf("read password from stdin: %w", err)
		}
		pw := strings.TrimRight(string(b), "\r\n")
		if pw == "" {
			return "", fmt.Errorf("empty password on stdin / 标准输入中的密码为空")
		}
		return pw, nil
	}
	fd := int(os.Stdin.Fd())
	if !term.IsTerminal(fd) {
		line, err := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
		if err != nil && line == "" {
			return "", fmt.Errorf("no password given: use --password-stdin / 未提供密码")
		}
		return strings.TrimRight(line, "\r\n"), nil
	}
	fmt.Fprint(cmd.ErrOrStderr(), "Password / 密码: ")
	b, err := term.ReadPassword(fd)
	fmt.Fprintln(cmd.ErrOrStderr())
	if err != nil {
		return "", fmt.Errorf("read password: %w", err)
	}
	return string(b), nil
}
