// Command outoftree is a HeteroFlow server built with an extra scheduler
// plugin that lives outside the project: it imports HeteroFlow as a library
// and adds the plugin with app.WithPlugin, as kube-scheduler's
// app.NewSchedulerCommand(app.WithPlugin(...)) does. A scheduling profile
// (profile.yaml beside this file, passed as scheduling.profile in the server
// configuration) enables the plugin by name.
//
//	go build -o heteroflow-custom ./scheduler/examples/outoftree
//	./heteroflow-custom server --config server.yaml   # scheduling.profile: profile.yaml
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/heteroflow/heteroflow/cmd/heteroflow/servercmd"
	"github.com/heteroflow/heteroflow/controlplane/app"
	"github.com/heteroflow/heteroflow/scheduler/framework"
	"github.com/heteroflow/heteroflow/scheduler/model"
)

// Name is the plugin's name in profiles and in /api/v1/plugins.
const Name = "MaintenanceWindow"

// maintenance refuses nodes labelled with the configured key (default
// "maintenance") set to "true": operators mark nodes for a hardware
// window and new work stays off them.
type maintenance struct{ label string }

var reasonMaintenance = framework.NewReason("node is in a maintenance window")

func (m *maintenance) Name() string { return Name }

func (m *maintenance) Filter(_ context.Context, _ *framework.Cycle, n *model.NodeInfo) framework.Status {
	if n.Node.Labels[m.label] == "true" {
		return framework.Reject(reasonMaintenance)
	}
	return framework.Status{}
}

func newMaintenance(args framework.Args, _ framework.Handle) (framework.Plugin, error) {
	cfg := struct {
		Label string `yaml:"label"`
	}{Label: "maintenance"}
	if err := args.Decode(&cfg); err != nil {
		return nil, err
	}
	if cfg.Label == "" {
		return nil, fmt.Errorf("%s: label must not be empty", Name)
	}
	return &maintenance{label: cfg.Label}, nil
}

func main() {
	root := &cobra.Command{Use: "heteroflow-custom", SilenceUsage: true}
	root.AddCommand(servercmd.New("outoftree-example", app.WithPlugin(Name, newMaintenance)))
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "heteroflow-custom: error:", err)
		os.Exit(1)
	}
}
