package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/heteroflow/heteroflow/scheduler/sim"
)

func init() {
	var nodesPath, tasksPath, profile, seeds, mix string
	var tune float64
	cmd := &cobra.Command{
		Use:   "sim --nodes FILE --tasks FILE [--profile NAME|FILE] [--seeds 42-51] [--tune 1.3] [--mix shared=0.8,scale=1.5]",
		Short: "Replay a task trace through the scheduler / 用调度器回放任务轨迹",
		Long: `Replay a trace (openb CSV or HeteroFlow JSON) through the same scheduler the server
runs, with the FGD paper's protocol, and print a JSON report on stdout: GPU allocation
ratio at 90/100/130% arrived demand, fragmentation at 50/80/90%, failed tasks and
placement throughput, each as mean and s.d. over the seeds.
Built-in profiles: default, fgd, bestfit, random; or a profile YAML file.
--mix replays a variant of the task list made from its own tasks (deterministic by its seed):
scale=1.5 makes every fractional task's share 1.5× larger (capped at 950 milli), shared=0.8 and
multi=0.3 replace tasks until fractional / multi-device tasks are that share of GPU demand.

用与服务端相同的调度器按 FGD 论文协议回放轨迹（openb CSV 或 HeteroFlow JSON），
在标准输出打印 JSON 报告：到达需求 90/100/130% 时的 GPU 分配率、50/80/90% 时的碎片率、
失败任务数与调度吞吐，均为各随机种子的均值与标准差。
内置策略：default、fgd、bestfit、random；也可给出策略 YAML 文件。
--mix 用轨迹自身的任务生成变体（由 seed 决定、可复现）：scale=1.5 将每个分数 GPU 任务的份额放大 1.5 倍
（上限 950 milli），shared=0.8、multi=0.3 替换任务直至分数任务 / 多卡任务占 GPU 需求的该比例。`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if nodesPath == "" || tasksPath == "" {
				return fmt.Errorf("--nodes and --tasks are required / 必须提供 --nodes 与 --tasks")
			}
			if tune != 0 && (tune < 1 || tune > 10) {
				return fmt.Errorf("--tune must be between 1 and 10, got %v / --tune 须在 1 到 10 之间", tune)
			}
			seedList, err := sim.ParseSeeds(seeds)
			if err != nil {
				return err
			}
			prof, err := sim.LoadProfile(profile)
			if err != nil {
				return err
			}
			nodes, err := sim.LoadNodes(nodesPath)
			if err != nil {
				return err
			}
			tasks, err := sim.LoadTasks(tasksPath)
			if err != nil {
				return err
			}
			if mix != "" {
				m, err := sim.ParseMix(mix)
				if err != nil {
					return err
				}
				if tasks, err = m.Apply(tasks); err != nil {
					return err
				}
			}
			rep, _, err := sim.Replay(cmd.Context(), sim.Config{Nodes: nodes, Tasks: tasks, Profile: prof, Tune: tune}, seedList)
			if err != nil {
				return err
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			return enc.Encode(rep)
		},
	}
	f := cmd.Flags()
	f.StringVar(&nodesPath, "nodes", "", "node list: openb CSV or JSON array of nodes / 节点清单")
	f.StringVar(&tasksPath, "tasks", "", "tasks: openb pod CSV or JSON array of requests / 任务清单")
	f.StringVar(&profile, "profile", "default", "built-in profile name or YAML file / 内置策略名或 YAML 文件")
	f.StringVar(&seeds, "seeds", "42", "seeds: 42-51, 42,43 or 42 / 随机种子")
	f.StringVar(&mix, "mix", "", "replay a variant of the tasks: scale=1.5 (fractional shares ×), shared=0.8 / multi=0.3 (share of GPU demand), seed=1 / 按比例生成任务变体")
	f.Float64Var(&tune, "tune", 1.3, "append sampled tasks up to this multiple of capacity (1 = none) / 追加采样任务至容量的倍数")
	rootCmd.AddCommand(cmd)
}
