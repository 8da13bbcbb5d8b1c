// Command heteroflow is HeteroFlow's single binary: the server, the node agent,
// the collector distribution, the scheduler simulator, the vendor-CLI tools and
// the client commands are its subcommands.
//
// Each subcommand lives in its own file and attaches itself to rootCmd in an
// init function, as cobra-generated programs do.
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

var rootCmd = &cobra.Command{
	Use:   "heteroflow",
	Short: "HeteroFlow: one platform for a fleet of mixed accelerators / 异构算力统一调度平台",
	Long: `HeteroFlow schedules, slices, meters and alerts on accelerators of every vendor
(NVIDIA, AMD, Hygon, Ascend, Cambricon, Kunlunxin, Moore Threads, Biren, Iluvatar, MetaX, Enflame).

HeteroFlow 统一纳管、调度、分片、计量与告警各厂商加速卡。`,
	SilenceUsage:  true,
	SilenceErrors: true,
}

func main() {
	strictGroups(rootCmd)
	bilingual(rootCmd)
	if cmd, err := rootCmd.ExecuteC(); err != nil {
		fmt.Fprintln(os.Stderr, "heteroflow: error:", errorText(cmd, err))
		os.Exit(1)
	}
}

// strictGroups makes every command that only groups subcommands (task,
// smi, …) fail on an unknown subcommand, with cobra's suggestions, instead
// of printing its help and exiting 0: a script with a typo must not
// "succeed". Without arguments a group still prints its help. The root is
// one of them, so that its unknown-command error is bilingual too.
func strictGroups(c *cobra.Command) {
	for _, sub := range c.Commands() {
		strictGroups(sub)
	}
	if c.Runnable() || !c.HasSubCommands() {
		return
	}
	c.Args = cobra.ArbitraryArgs
	if c.SuggestionsMinimumDistance <= 0 {
		c.SuggestionsMinimumDistance = 2
	}
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return cmd.Help()
		}
		msg := fmt.Sprintf("unknown command %q for %q / 未知命令", args[0], cmd.CommandPath())
		if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
			msg += "\n\nDid you mean this? / 您是否要输入:\n\t" + strings.Join(s, "\n\t")
		}
		return fmt.Errorf("%s\nRun '%s --help' for usage. / 运行 '%s --help' 查看用法", msg, cmd.CommandPath(), cmd.CommandPath())
	}
}
