package plugins

import (
	"context"

	"github.com/heteroflow/heteroflow/scheduler/framework"
	"github.com/heteroflow/heteroflow/scheduler/model"
)

// Random scores every feasible node uniformly at random (the Random-fit
// baseline). It draws from the cycle's seeded source, so a replay with the
// same seed is reproducible; being Volatile it turns the memo off.
type Random struct{}

var (
	_ framework.ScorePlugin = Random{}
	_ framework.Volatile    = Random{}
)

// NewRandom builds the plugin (no args).
func NewRandom(args framework.Args, _ framework.Handle) (framework.Plugin, error) {
	return Random{}, args.Decode(&struct{}{})
}

// Name implements framework.Plugin.
func (Random) Name() string { return NameRandom }

// Volatile implements framework.Volatile.
func (Random) Volatile() bool { return true }

// Score implements framework.ScorePlugin.
func (Random) Score(_ context.Context, c *framework.Cycle, _ *model.NodeInfo, _ *framework.Assignment) (float64, framework.Status) {
	return 100 * c.Rand.Float64(), framework.OK
}
