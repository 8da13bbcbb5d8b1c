package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/heteroflow/heteroflow/scheduler/model"
	"github.com/heteroflow/heteroflow/scheduler/sim"
)

func init() {
	var nodesPath, tasksPath, profile, seeds, mix, compare, metric, format string
	var tune float64
	cmd := &cobra.Command{
		Use:   "sim --nodes FILE --tasks FILE [--profile NAME|FILE] [--seeds 42-51] [--tune 1.3] [--mix shared=0.8,scale=1.5]",
		Short: "Replay a task trace through the scheduler / 用调度器回放任务轨迹",
		Long: `Replay a trace (openb CSV or HeteroFlow JSON) through the same scheduler the server
runs, with the FGD paper's protocol, and print a JSON report on stdout: GPU allocation
ratio at 90/100/130% arrived demand, fragmentation at 50/80/90%, failed tasks and
placement throughput, each as mean and s.d. over the seeds; on a fleet of several
vendors also per vendor (by_vendor). --compare runs several profiles on the same
seeds in one run; --metric slicing measures fragmentation under slicing rules
(MIG profiles, vNPU templates); --format table prints Markdown tables.
Built-in profiles: default, fgd, bestfit, random; or a profile YAML file.
--mix replays a variant of the task list made from its own tasks (deterministic by its seed):
scale=1.5 makes every fractional task's share 1.5× larger (capped at 950 milli), shared=0.8 and
multi=0.3 replace tasks until fractional / multi-device tasks are that share of GPU demand.
"heteroflow sim hetero-gen" makes a mixed-vendor fleet and workload from openb files.

用与服务端相同的调度器按 FGD 论文协议回放轨迹（openb CSV 或 HeteroFlow JSON），
在标准输出打印 JSON 报告：到达需求 90/100/130% 时的 GPU 分配率、50/80/90% 时的碎片率、
失败任务数与调度吞吐，均为各随机种子的均值与标准差；多厂商集群另按厂商给出（by_vendor）。
--compare 在同一次运行中以相同种子比较多个策略；--metric slicing 按切分规则
（MIG 规格、vNPU 模板）计算碎片；--format table 输出 Markdown 表格。
内置策略：default、fgd、bestfit、random；也可给出策略 YAML 文件。
--mix 用轨迹自身的任务生成变体（由 seed 决定、可复现）：scale=1.5 将每个分数 GPU 任务的份额放大 1.5 倍
（上限 950 milli），shared=0.8、multi=0.3 替换任务直至分数任务 / 多卡任务占 GPU 需求的该比例。
"heteroflow sim hetero-gen" 由 openb 文件生成多厂商集群与任务。`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if nodesPath == "" || tasksPath == "" {
				return fmt.Errorf("--nodes and --tasks are required / 必须提供 --nodes 与 --tasks")
			}
			if tune != 0 && (tune < 1 || tune > 10) {
				return fmt.Errorf("--tune must be between 1 and 10, got %v / --tune 须在 1 到 10 之间", tune)
			}
			if metric != "fgd" && metric != "slicing" {
				return fmt.Errorf("--metric must be fgd or slicing, got %q / --metric 须为 fgd 或 slicing", metric)
			}
			if format != "json" && format != "table" {
				return fmt.Errorf("--format must be json or table, got %q / --format 须为 json 或 table", format)
			}
			seedList, err := sim.ParseSeeds(seeds)
			if err != nil {
				return fmt.Errorf("--seeds: %w / 随机种子格式错误（如 42-51、42,43 或 42）", err)
			}
			names := []string{profile}
			if compare != "" {
				names = nil
				for _, n := range strings.Split(compare, ",") {
					if n = strings.TrimSpace(n); n != "" {
						names = append(names, n)
					}
				}
				if len(names) == 0 {
					return fmt.Errorf("--compare names no profile / --compare 未给出策略")
				}
			}
			cfg := sim.Config{Tune: tune, SlicingMetric: metric == "slicing"}
			if cfg.Nodes, err = loadSimNodes(nodesPath); err != nil {
				return err
			}
			if cfg.Tasks, err = loadSimTasks(tasksPath); err != nil {
				return err
			}
			if mix != "" {
				m, err := sim.ParseMix(mix)
				if err != nil {
					return fmt.Errorf("--mix: %w / --mix 格式错误", err)
				}
				if cfg.Tasks, err = m.Apply(cfg.Tasks); err != nil {
					return fmt.Errorf("--mix: %w / 无法生成任务变体", err)
				}
			}
			reports := map[string]sim.Report{}
			for _, n := range names {
				if cfg.Profile, err = sim.LoadProfile(n); err != nil {
					return fmt.Errorf("%w / 无法加载策略 %q（内置策略：bestfit、default、fgd、random，或策略 YAML 文件）", err, n)
				}
				rep, _, err := sim.Replay(cmd.Context(), cfg, seedList)
				if err != nil {
					return fmt.Errorf("profile %s: %w / 策略 %s 回放失败", n, err, n)
				}
				reports[n] = rep
			}
			if format == "table" {
				return writeSimTables(cmd.OutOrStdout(), names, reports)
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			if compare == "" {
				return enc.Encode(reports[profile])
			}
			return enc.Encode(map[string]any{"profiles": reports})
		},
	}
	f := cmd.Flags()
	f.StringVar(&nodesPath, "nodes", "", "node list: openb CSV or JSON array of nodes / 节点清单")
	f.StringVar(&tasksPath, "tasks", "", "tasks: openb pod CSV or JSON array of requests / 任务清单")
	f.StringVar(&profile, "profile", "default", "built-in profile name or YAML file / 内置策略名或 YAML 文件")
	f.StringVar(&compare, "compare", "", "several profiles in one run, e.g. default,bestfit,fgd / 同一次运行比较多个策略")
	f.StringVar(&seeds, "seeds", "42", "seeds: 42-51, 42,43 or 42 / 随机种子")
	f.StringVar(&mix, "mix", "", "replay a variant of the tasks: scale=1.5 (fractional shares ×), shared=0.8 / multi=0.3 (share of GPU demand), seed=1 / 按比例生成任务变体")
	f.Float64Var(&tune, "tune", 1.3, "append sampled tasks up to this multiple of capacity (1 = none) / 追加采样任务至容量的倍数")
	f.StringVar(&metric, "metric", "fgd", "fragmentation measure: fgd or slicing (MIG profiles, vNPU templates) / 碎片度量")
	f.StringVar(&format, "format", "json", "output: json or table (Markdown) / 输出格式")
	cmd.AddCommand(heteroGenCmd())
	rootCmd.AddCommand(cmd)
}

func heteroGenCmd() *cobra.Command {
	var nodesPath, tasksPath, outNodes, outTasks string
	var seed uint64
	cmd := &cobra.Command{
		Use:   "hetero-gen --nodes openb_node.csv --tasks openb_pod.csv --seed 1 --out-nodes nodes.json --out-tasks tasks.json",
		Short: "Make a mixed-vendor fleet and workload from openb files / 由 openb 文件生成多厂商集群与任务",
		Long: `Turn an openb node list and pod list into a mixed fleet (NVIDIA A100/H100 with MIG
profiles, T4, Ascend 910B2/310P3 with vNPU templates, Cambricon, Hygon, whole-card-only
Biren; memory sizes and slicing rules from the vendor catalog) and tasks with vendor,
model and QoS constraints. The same inputs and seed always give the same files; replay
them with "heteroflow sim --nodes nodes.json --tasks tasks.json".

将 openb 节点与任务清单转为多厂商集群（带 MIG 规格的 NVIDIA A100/H100、T4、带 vNPU 模板的
昇腾 910B2/310P3、寒武纪、海光、仅整卡的壁仞；显存与切分规则取自厂商目录）以及带厂商、
型号与 QoS 约束的任务。相同输入与种子总是生成相同文件；用 "heteroflow sim" 回放。`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if nodesPath == "" || tasksPath == "" || outNodes == "" || outTasks == "" {
				return fmt.Errorf("--nodes, --tasks, --out-nodes and --out-tasks are required / 必须提供 --nodes、--tasks、--out-nodes 与 --out-tasks")
			}
			nodes, err := loadSimNodes(nodesPath)
			if err != nil {
				return err
			}
			tasks, err := loadSimTasks(tasksPath)
			if err != nil {
				return err
			}
			hn, ht, err := sim.Heterogenize(nodes, tasks, seed)
			if err != nil {
				return fmt.Errorf("%w / 无法生成多厂商集群", err)
			}
			if err := writeJSONFile(outNodes, sim.NodesForFile(hn)); err != nil {
				return err
			}
			if err := writeJSONFile(outTasks, ht); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%d nodes → %s, %d tasks → %s (seed %d) / 已生成 %d 个节点、%d 个任务\n",
				len(hn), outNodes, len(ht), outTasks, seed, len(hn), len(ht))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&nodesPath, "nodes", "", "openb node CSV / openb 节点清单")
	f.StringVar(&tasksPath, "tasks", "", "openb pod CSV / openb 任务清单")
	f.StringVar(&outNodes, "out-nodes", "", "output: JSON node list / 输出节点 JSON")
	f.StringVar(&outTasks, "out-tasks", "", "output: JSON task list / 输出任务 JSON")
	f.Uint64Var(&seed, "seed", 1, "generator seed / 生成种子")
	return cmd
}

func writeJSONFile(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("%w / 无法写入文件 %s", err, path)
	}
	return nil
}

// loadSimNodes and loadSimTasks read the trace files; the loader's error
// (a missing file, a bad row) is English, so it gets its Chinese here.
func loadSimNodes(path string) ([]model.Node, error) {
	n, err := sim.LoadNodes(path)
	if err != nil {
		return nil, fmt.Errorf("--nodes: %w / 无法读取节点清单 %s", err, path)
	}
	return n, nil
}

func loadSimTasks(path string) ([]model.Request, error) {
	t, err := sim.LoadTasks(path)
	if err != nil {
		return nil, fmt.Errorf("--tasks: %w / 无法读取任务清单 %s", err, path)
	}
	return t, nil
}

// writeSimTables prints the reports as Markdown: the cluster, then one
// table per vendor, one row per profile.
func writeSimTables(w io.Writer, names []string, reports map[string]sim.Report) error {
	pct := func(s *sim.Stat) string {
		if s == nil {
			return "–"
		}
		return fmt.Sprintf("%.2f ± %.2f", s.Mean, s.SD)
	}
	header := "| profile | alloc @90 % | alloc @100 % | alloc @130 % | frag @50 % | frag @80 % | frag @90 % |\n|---|---|---|---|---|---|---|\n"
	row := func(name string, a, fr map[string]*sim.Stat) string {
		return fmt.Sprintf("| %s | %s | %s | %s | %s | %s | %s |\n", name, pct(a["90"]), pct(a["100"]), pct(a["130"]),
			pct(fr["50"]), pct(fr["80"]), pct(fr["90"]))
	}
	var b strings.Builder
	b.WriteString("All devices (% of capacity; failed tasks at the end)\n\n")
	b.WriteString("| profile | alloc @90 % | alloc @100 % | alloc @130 % | frag @50 % | frag @80 % | frag @90 % | failed |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	vendors := map[string]int{}
	for _, n := range names {
		r := reports[n]
		b.WriteString(strings.TrimSuffix(row(n, r.AllocationPercent, r.FragmentationPercent), "\n") + fmt.Sprintf(" %.0f |\n", r.FailedTasks.Mean))
		for v, vr := range r.ByVendor {
			vendors[v] = vr.Devices
		}
	}
	vs := make([]string, 0, len(vendors))
	for v := range vendors {
		vs = append(vs, v)
	}
	sort.Strings(vs)
	for _, v := range vs {
		fmt.Fprintf(&b, "\n%s (%d devices; %% of the vendor's devices)\n\n%s", v, vendors[v], header)
		for _, n := range names {
			if vr := reports[n].ByVendor[v]; vr != nil {
				b.WriteString(row(n, vr.AllocationPercent, vr.FragmentationPercent))
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
