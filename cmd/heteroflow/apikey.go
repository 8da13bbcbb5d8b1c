package main

import (
	"fmt"
	"net/http"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/heteroflow/heteroflow/controlplane/apitypes"
)

// The apikey commands manage API keys (hf_<prefix>_<secret>) over the API,
// as the logged-in user: the keys a script, Grafana, a hub or the other
// client commands' --api-key use. Without them a key could only be made by
// calling POST /api/v1/apikeys by hand.
func init() {
	var cf clientFlags
	cmd := &cobra.Command{
		Use:   "apikey",
		Short: "Create, list and revoke API keys / 创建、列出、吊销 API 密钥",
	}
	cf.register(cmd)
	cmd.AddCommand(apikeyCreateCmd(&cf), apikeyListCmd(&cf), apikeyRevokeCmd(&cf))
	rootCmd.AddCommand(cmd)
}

func apikeyCreateCmd(cf *clientFlags) *cobra.Command {
	var name, role string
	var ttl time.Duration
	cmd := &cobra.Command{
		Use:   "create --name NAME [--role ROLE] [--expires-in DURATION]",
		Short: "Create an API key; the key is printed once / 创建 API 密钥（密钥只显示一次）",
		Example: `  heteroflow apikey create --name grafana --role viewer
  heteroflow apikey create --name ci --role user --expires-in 720h`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if name == "" {
				return fmt.Errorf("--name is required / 必须提供 --name")
			}
			if ttl < 0 {
				return fmt.Errorf("--expires-in must be positive, not %s / --expires-in 必须为正", ttl)
			}
			body := map[string]any{"name": name, "role": role}
			if ttl > 0 {
				body["expires_at"] = time.Now().Add(ttl).UTC().Format(time.RFC3339)
			}
			c, err := cf.client()
			if err != nil {
				return err
			}
			var k apitypes.CreatedAPIKeyJSON
			if err := c.Do(cmd.Context(), http.MethodPost, "/api/v1/apikeys", body, &k); err != nil {
				return err
			}
			if cf.json {
				return printJSON(cmd.OutOrStdout(), k)
			}
			// The key alone on stdout (for $(…)); what it is on stderr.
			fmt.Fprintln(cmd.OutOrStdout(), k.Key)
			fmt.Fprintf(cmd.ErrOrStderr(), "API key %d %q (role %s) created; it is shown only this once / 已创建，密钥只显示这一次\n",
				k.ID, k.Name, k.Role)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&name, "name", "", "what the key is for (required) / 用途名称（必填）")
	f.StringVar(&role, "role", "user", "admin, operator, user or viewer, at most yours / 角色（不高于你自己的）")
	f.DurationVar(&ttl, "expires-in", 0, "expire after this long, e.g. 720h (default: never) / 有效期（默认不过期）")
	return cmd
}

func apikeyListCmd(cf *clientFlags) *cobra.Command {
	var limit int
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List API keys (yours; admins: all) / 列出 API 密钥（管理员可见全部）",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := cf.client()
			if err != nil {
				return err
			}
			var page struct {
				Items []apitypes.APIKeyJSON `json:"items"`
				Total int                   `json:"total"`
			}
			if err := c.Do(cmd.Context(), http.MethodGet, "/api/v1/apikeys?"+listQuery(nil, limit, 0).Encode(), nil, &page); err != nil {
				return err
			}
			if cf.json {
				return printJSON(cmd.OutOrStdout(), page)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tNAME / 名称\tPREFIX / 前缀\tROLE / 角色\tCREATED / 创建\tLAST USED / 最近使用\tEXPIRES / 过期\tREVOKED / 吊销")
			opt := func(t *time.Time) string {
				if t == nil {
					return "—"
				}
				return fmtTime(*t)
			}
			for _, k := range page.Items {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Name, k.Prefix, k.Role, fmtTime(k.CreatedAt),
					opt(k.LastUsedAt), opt(k.ExpiresAt), opt(k.RevokedAt))
			}
			_ = tw.Flush()
			fmt.Fprintf(cmd.OutOrStdout(), "%d of %d / 共 %d\n", len(page.Items), page.Total, page.Total)
			return nil
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 100, "rows (max 1000) / 行数")
	return cmd
}

func apikeyRevokeCmd(cf *clientFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke an API key; it stops working at once / 吊销 API 密钥（立即失效）",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil || id <= 0 {
				return fmt.Errorf("API key id must be a positive number, not %q / API 密钥 ID 必须是正整数", args[0])
			}
			c, err := cf.client()
			if err != nil {
				return err
			}
			if err := c.Do(cmd.Context(), http.MethodDelete, fmt.Sprintf("/api/v1/apikeys/%d", id), nil, nil); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "API key %d revoked / 已吊销\n", id)
			return nil
		},
	}
}
