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
	if err := rootCmd.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "heteroflow: error:", err)
		os.Exit(1)
	}
}
