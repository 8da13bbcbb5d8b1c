package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/heteroflow/heteroflow/controlplane/client"
)

func init() {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Load-test a running server / 对运行中的服务器做压测",
	}
	var server, apiKey string
	var concurrency int
	var duration time.Duration
	var asJSON bool
	submit := &cobra.Command{
		Use:     "submit",
		Short:   "Measure task submissions/s and latency through the REST API / 测量任务提交吞吐与延迟",
		Example: `  heteroflow bench submit --server http://127.0.0.1:3333 --api-key hf_… --concurrency 32 --duration 20s`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if server == "" || apiKey == "" {
				return fmt.Errorf("--server and --api-key are required / 需要 --server 和 --api-key")
			}
			r, err := client.BenchSubmit(cmd.Context(), server, apiKey, concurrency, duration)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), r)
			}
			fmt.Fprintln(cmd.OutOrStdout(), r)
			if r.Errors > 0 {
				return fmt.Errorf("%d submissions failed, first: %s / 有提交失败", r.Errors, r.FirstError)
			}
			return nil
		},
	}
	f := submit.Flags()
	f.StringVar(&server, "server", "", "server URL / 服务器地址")
	f.StringVar(&apiKey, "api-key", "", "API key with task write permission / API 密钥")
	f.IntVar(&concurrency, "concurrency", 16, "concurrent clients / 并发数")
	f.DurationVar(&duration, "duration", 10*time.Second, "how long to run / 持续时间")
	f.BoolVar(&asJSON, "json", false, "print JSON / 以 JSON 输出")
	cmd.AddCommand(submit)
	rootCmd.AddCommand(cmd)
}
