package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/heteroflow/heteroflow/receivers/inventory"
	"github.com/heteroflow/heteroflow/receivers/smi"
)

func init() {
	cmd := &cobra.Command{
		Use:   "smi",
		Short: "Read accelerator management CLIs / 读取各厂商加速卡管理工具输出",
	}
	cmd.AddCommand(smiParseCmd(), smiDetectCmd())
	rootCmd.AddCommand(cmd)
}

func smiParseCmd() *cobra.Command {
	var vendor, format string
	c := &cobra.Command{
		Use:   "parse --vendor V [--format F] FILE",
		Short: "Print the inventory in a captured CLI output as JSON / 将采集到的工具输出解析为 JSON 清单",
		Long: `Parse one captured output of a vendor CLI (nvidia-smi -q -x, npu-smi info, cnmon, …)
and print the normalized inventory as JSON; unknown values are null. The output form is
detected automatically; --format forces one. FILE "-" reads standard input.

解析一份厂商工具输出并以 JSON 打印统一清单，未知值为 null。输出格式自动识别，可用 --format 指定。`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if vendor == "" {
				return fmt.Errorf("--vendor is required (one of %v) / 必须指定 --vendor", inventory.Vendors)
			}
			data, err := readInput(cmd.InOrStdin(), args[0])
			if err != nil {
				return err
			}
			snap, err := smi.Parse(vendor, format, data)
			if err != nil {
				return fmt.Errorf("cannot parse %s as %s output / 无法解析: %w", args[0], vendor, err)
			}
			return writeJSON(cmd.OutOrStdout(), snap)
		},
	}
	c.Flags().StringVar(&vendor, "vendor", "", "vendor: nvidia, amd, hygon, ascend, cambricon, kunlunxin, mthreads, biren, iluvatar, metax, enflame / 厂商")
	c.Flags().StringVar(&format, "format", "", "force the output form (e.g. xml, csv, list, topo, info, table, json) / 强制指定格式")
	return c
}

func smiDetectCmd() *cobra.Command {
	var timeout time.Duration
	c := &cobra.Command{
		Use:   "detect",
		Short: "Run every vendor CLI found on PATH and print all inventories / 运行本机可用的厂商工具并打印全部清单",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := []*inventory.Snapshot{}
			for _, v := range inventory.Vendors {
				ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
				snap, err := smi.Collect(ctx, v, smi.ExecRunner)
				cancel()
				switch {
				case err == nil:
					out = append(out, snap)
				case smi.Unavailable(err):
					// Absent vendors are the normal case on a node.
				default:
					fmt.Fprintf(cmd.ErrOrStderr(), "heteroflow smi detect: %s: %v\n", v, err)
				}
			}
			if len(out) == 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "heteroflow smi detect: no accelerator CLI found on PATH; looked for / 未在 PATH 中找到加速卡管理工具，已查找: %s\n",
					strings.Join(toolsLookedFor(), ", "))
			}
			return writeJSON(cmd.OutOrStdout(), out)
		},
	}
	c.Flags().DurationVar(&timeout, "timeout", 30*time.Second, "per-vendor time limit / 每个厂商的超时")
	return c
}

// toolsLookedFor lists every vendor CLI detect tries, as "tool (vendor)".
func toolsLookedFor() []string {
	var out []string
	for _, v := range inventory.Vendors {
		spec, err := smi.Lookup(v)
		if err != nil {
			continue
		}
		for _, t := range spec.Tools {
			out = append(out, fmt.Sprintf("%s (%s)", t.Name, v))
		}
	}
	return out
}

func readInput(stdin io.Reader, path string) ([]byte, error) {
	if path == "-" {
		return io.ReadAll(io.LimitReader(stdin, 64<<20))
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s / 读取失败: %w", path, err)
	}
	return data, nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
