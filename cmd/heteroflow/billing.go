package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"

	"github.com/spf13/cobra"
)

func init() {
	var cf clientFlags
	cmd := &cobra.Command{
		Use:   "billing",
		Short: "Usage and cost reports / 用量与费用报表",
	}
	cf.register(cmd)
	cmd.AddCommand(billingReportCmd(&cf))
	rootCmd.AddCommand(cmd)
}

func billingReportCmd(cf *clientFlags) *cobra.Command {
	var tenant, project, user, month, period, start, format, output string
	cmd := &cobra.Command{
		Use:   "report",
		Short: "Usage and cost of a tenant, project or user for a day, week or month / 租户、项目或用户的用量与费用报表",
		Example: `  heteroflow billing report --tenant acme --month 2026-11 --format csv
  heteroflow billing report --tenant acme --month 2026-11 --format xlsx -o acme-2026-11.xlsx
  heteroflow billing report --period week --start 2026-11-16 --format json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// --json is every client command's "print JSON": here it is
			// --format json, and contradicts any other --format.
			if cf.json {
				if cmd.Flags().Changed("format") && format != "json" {
					return fmt.Errorf("--json and --format %s contradict each other: give one / --json 与 --format %s 冲突，请只给一个", format, format)
				}
				format = "json"
			}
			switch format {
			case "csv", "xlsx", "json":
			default:
				return fmt.Errorf("--format must be csv, xlsx or json, not %q / --format 只能是 csv、xlsx 或 json", format)
			}
			if format == "xlsx" && output == "" {
				return fmt.Errorf("--format xlsx writes a binary workbook: give -o FILE / xlsx 为二进制文件，请用 -o 指定输出文件")
			}
			q := url.Values{}
			for k, v := range map[string]string{"tenant": tenant, "project": project, "user": user, "month": month,
				"period": period, "start": start} {
				if v != "" {
					q.Set(k, v)
				}
			}
			path := "/api/v1/billing/report?" + q.Encode()
			if format != "json" {
				q.Set("format", format)
				path = "/api/v1/billing/report/export?" + q.Encode()
			}
			c, err := cf.client()
			if err != nil {
				return err
			}
			var body []byte
			if err := c.Do(cmd.Context(), "GET", path, nil, &body); err != nil {
				return err
			}
			if format == "json" {
				var pretty bytes.Buffer
				if json.Indent(&pretty, body, "", "  ") == nil {
					body = append(pretty.Bytes(), '\n')
				}
			}
			if output == "" {
				_, err = cmd.OutOrStdout().Write(body)
				return err
			}
			if err := os.WriteFile(output, body, 0o644); err != nil {
				return fmt.Errorf("write %s: %w / 无法写入文件", output, err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s (%d bytes) / 已写入\n", output, len(body))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&tenant, "tenant", "", "tenant / 租户")
	f.StringVar(&project, "project", "", "project / 项目")
	f.StringVar(&user, "user", "", "owner username / 用户名")
	f.StringVar(&month, "month", "", "month YYYY-MM (sets --period month) / 月份")
	f.StringVar(&period, "period", "", "day, week or month (default month) / 周期")
	f.StringVar(&start, "start", "", "a day of the period, YYYY-MM-DD (default today) / 周期内的某一天")
	f.StringVar(&format, "format", "csv", "csv, xlsx or json (--json = json) / 输出格式（--json 即 json）")
	f.StringVarP(&output, "output", "o", "", "write to FILE instead of standard output / 输出文件")
	return cmd
}
