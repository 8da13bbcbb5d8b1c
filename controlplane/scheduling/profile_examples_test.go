package scheduling

import (
	"maps"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/scheduler/framework"
)

// TestLivePlacementExamplesMatchTheLiveProfile: the replayable copies of the
// live profile's placement part (scheduler/examples/live-placement, used by
// BENCHMARKS "The live profile and the dead-space term") keep every plugin
// they list equal to the live profile's, with and without the dead-space
// arguments, so that the measurement stays about the profile the server runs.
func TestLivePlacementExamplesMatchTheLiveProfile(t *testing.T) {
	live := map[string]framework.PluginConfig{}
	for _, p := range DefaultProfile().Plugins {
		live[p.Name] = p
	}
	load := func(name string) framework.Profile {
		f, err := os.Open("../../scheduler/examples/live-placement/" + name)
		require.NoError(t, err)
		defer f.Close()
		p, err := framework.LoadProfile(f)
		require.NoError(t, err)
		return p
	}
	args := func(p framework.PluginConfig) map[string]any {
		out := map[string]any{}
		if p.Args.Kind != 0 {
			require.NoError(t, p.Args.Decode(&out))
		}
		return out
	}
	weight := func(p framework.PluginConfig) float64 {
		if p.Weight == nil {
			return 1
		}
		return *p.Weight
	}
	for _, file := range []string{"with-deadspace.yaml", "without-deadspace.yaml"} {
		for _, p := range load(file).Plugins {
			l, ok := live[p.Name]
			require.True(t, ok, "%s: %s is not in the live profile", file, p.Name)
			require.Equal(t, weight(l), weight(p), "%s: %s weight", file, p.Name)
			want := args(l)
			if file == "without-deadspace.yaml" && p.Name == "Fragmentation" {
				want = maps.Clone(want)
				delete(want, "deadSpace")
				delete(want, "fillerShare")
			}
			require.Equal(t, want, args(p), "%s: %s args", file, p.Name)
		}
	}
}
