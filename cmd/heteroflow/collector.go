package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/heteroflow/heteroflow/collector"
)

func init() {
	var configPath string
	var validateOnly bool
	cmd := &cobra.Command{
		Use:   "collector --config FILE",
		Short: "Run the OpenTelemetry collector with the vendor receivers / 运行内置 OpenTelemetry 采集器",
		Long: `Run HeteroFlow's OpenTelemetry Collector distribution: one receiver per accelerator CLI
(nvidia_smi, rocm_smi, hy_smi, npu_smi, cnmon, xpu_smi, mthreads_gmi, brsmi, ixsmi, mx_smi, efsmi),
host_metrics, host_resource, batch, memory_limiter, and the otlp_http, prometheus_remote_write,
prometheus and debug exporters. deploy/collector.yaml is a documented default config.

运行 HeteroFlow 的 OpenTelemetry 采集器发行版：每种加速卡命令行工具一个接收器，外加主机指标、
主机资源属性、批处理与内存限制处理器，以及 otlp_http、prometheus_remote_write、prometheus、debug 导出器。
默认配置见 deploy/collector.yaml。`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if configPath == "" {
				return fmt.Errorf("--config is required / 必须指定 --config")
			}
			// The collector library's errors are English and bury the
			// file's name; a missing file is said plainly first.
			if _, err := os.Stat(configPath); err != nil {
				return fmt.Errorf("collector config %s: %w / 无法读取采集器配置文件 %s", configPath, err, configPath)
			}
			uri, err := collector.FileURI(configPath)
			if err != nil {
				return err
			}
			set := collector.Settings{ConfigURIs: []string{uri}, Version: version}
			if validateOnly {
				if err := collector.Validate(cmd.Context(), set); err != nil {
					return fmt.Errorf("%w / 采集器配置无效", err)
				}
				fmt.Fprintln(cmd.OutOrStdout(), "config ok / 配置有效")
				return nil
			}
			if err := collector.Run(cmd.Context(), set); err != nil {
				return fmt.Errorf("%w / 采集器启动或运行失败", err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "", "collector YAML config file / 采集器 YAML 配置文件")
	cmd.Flags().BoolVar(&validateOnly, "validate", false, "check the config and exit / 仅校验配置后退出")
	rootCmd.AddCommand(cmd)
}
