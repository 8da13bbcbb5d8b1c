package sim

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/scheduler/framework"
	"github.com/heteroflow/heteroflow/scheduler/model"
	"github.com/heteroflow/heteroflow/scheduler/plugins"
)

const testdata = "../testdata/"

func TestParseOpenb(t *testing.T) {
	t.Parallel()
	nodes, err := LoadNodes(testdata + "tiny_nodes.csv")
	require.NoError(t, err)
	require.Len(t, nodes, 2)
	require.Len(t, nodes[1].Devices, 4)
	require.Equal(t, "V100M16", nodes[1].Devices[0].Model)
	require.Equal(t, "hami-core", nodes[1].Devices[0].Isolation.DriverLimits)
	tasks, err := LoadTasks(testdata + "tiny_pods.csv")
	require.NoError(t, err)
	require.Len(t, tasks, 6)
	// gpu_milli 500 → 50 % → 500 milli; gpu_spec → allowed models.
	require.Equal(t, int32(500), tasks[0].ComputeMilli)
	require.Equal(t, []string{"V100M16"}, tasks[3].Models)
	require.Equal(t, int64(8192), tasks[3].HostMemoryMiB)
	require.Equal(t, model.QoSSilver, tasks[3].QoS)

	bad := []struct{ name, csv, err string }{
		{"missing column", "name,cpu_milli\nx,1\n", "missing column"},
		{"bad number", "name,cpu_milli,memory_mib,num_gpu,gpu_milli\nx,abc,1,0,0\n", "cpu_milli"},
		{"milli out of range", "name,cpu_milli,memory_mib,num_gpu,gpu_milli\nx,1,1,1,1500\n", "gpu_milli"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseOpenbPods(strings.NewReader(tt.csv))
			require.ErrorContains(t, err, tt.err)
		})
	}
	_, err = ParseOpenbNodes(strings.NewReader("sn,cpu_milli,memory_mib,gpu,model\nn,1,1,x,T4\n"))
	require.Error(t, err)
	_, err = parseJSONTasks([]byte(`[{"name":"x","device_count":1,"compute_percent":10,"typo":1}]`))
	require.ErrorContains(t, err, "typo")
	_, err = parseJSONTasks([]byte(`[{"name":"x","device_count":1,"compute_percent":150}]`))
	require.ErrorContains(t, err, "compute_percent")
}

// TestLoadProfileChecksPluginArgs: a profile with a bad plugin argument is
// refused when loaded, naming the plugin, before any trace is read.
func TestLoadProfileChecksPluginArgs(t *testing.T) {
	for _, name := range BuiltinProfiles() {
		_, err := LoadProfile(name)
		require.NoError(t, err, name)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("name: x\nassign: Fragmentation\nplugins:\n  - name: Fragmentation\n    args: {demandExponent: 9}\n"), 0o600))
	_, err := LoadProfile(bad)
	require.ErrorContains(t, err, "plugin Fragmentation: demandExponent must be in [-2, 2]")
	_, err = LoadProfile("no-such-profile")
	require.ErrorContains(t, err, "neither a built-in")
}

func TestParseSeeds(t *testing.T) {
	t.Parallel()
	s, err := ParseSeeds("42-44, 50")
	require.NoError(t, err)
	require.Equal(t, []uint64{42, 43, 44, 50}, s)
	for _, bad := range []string{"", "x", "5-3", "-1"} {
		_, err := ParseSeeds(bad)
		require.Error(t, err, bad)
	}
}

// TestTinyReplayExact replays the fixture and checks every number against a
// hand-derived expectation: tiny-pod-5 (20 CPUs) fits no node and fails;
// every other pod fits whatever the order (capacity 6000 milli, demand
// 3800 of it placeable). The buckets are recomputed here from the order.
func TestTinyReplayExact(t *testing.T) {
	t.Parallel()
	nodes, err := LoadNodes(testdata + "tiny_nodes.csv")
	require.NoError(t, err)
	tasks, err := LoadTasks(testdata + "tiny_pods.csv")
	require.NoError(t, err)
	for _, name := range BuiltinProfiles() {
		t.Run(name, func(t *testing.T) {
			prof, err := LoadProfile(name)
			require.NoError(t, err)
			cfg := Config{Nodes: nodes, Tasks: tasks, Profile: prof, Tune: 1}
			r, err := Run(context.Background(), cfg, 42)
			require.NoError(t, err)
			require.Equal(t, 1, r.Failed)
			require.Equal(t, 6, r.Tasks)
			require.Equal(t, map[string]float64{ClassWhole: 100 * 1000.0 / 6000}, r.FailedDemand, "tiny-pod-5, one whole device of 6")
			order := Order(tasks, 42, 1, 6000)
			want := map[int]float64{}
			n := map[int]int{}
			var arrived, alloc int64
			for _, tk := range order {
				d := int64(tk.DeviceCount) * int64(tk.ComputeMilli)
				arrived += d
				if tk.ID != "tiny-pod-5" {
					alloc += d
				}
				b := int(math.Round(100 * float64(arrived) / 6000))
				want[b] += 100 * float64(alloc) / 6000
				n[b]++
			}
			for b := range want {
				want[b] /= float64(n[b])
			}
			require.Len(t, r.Alloc, len(want))
			for b, v := range want {
				require.InDelta(t, v, r.Alloc[b], 1e-9, "bucket %d", b)
			}
			// All 3800 placeable milli allocated at 80% arrived.
			require.InDelta(t, 100*3800.0/6000, r.Alloc[80], 1e-9)
		})
	}
}

// TestTinyPlacements checks where the default profile puts each fixture pod.
func TestTinyPlacements(t *testing.T) {
	t.Parallel()
	nodes, err := LoadNodes(testdata + "tiny_nodes.csv")
	require.NoError(t, err)
	tasks, err := LoadTasks(testdata + "tiny_pods.csv")
	require.NoError(t, err)
	cl, err := model.NewCluster(1)
	require.NoError(t, err)
	for _, n := range nodes {
		_, err := cl.AddNode(n)
		require.NoError(t, err)
	}
	prof, err := LoadProfile("default")
	require.NoError(t, err)
	fw, err := framework.New(plugins.Registry(), prof, cl, framework.Options{})
	require.NoError(t, err)
	fr, _ := fw.Plugin(plugins.NameFragmentation)
	require.NoError(t, fr.(*plugins.Fragmentation).ObserveWorkload(tasks))
	got := map[string]string{}
	for i := range tasks {
		res, err := fw.Schedule(context.Background(), &tasks[i], framework.ScheduleOptions{Diagnose: true})
		if err != nil {
			require.ErrorIs(t, err, framework.ErrUnschedulable)
			require.Equal(t, map[string]int{"insufficient cpu": 2}, res.Diagnosis.ByReason)
			got[tasks[i].ID] = "-"
			continue
		}
		got[tasks[i].ID] = res.Placement.Node
	}
	require.Equal(t, "tiny-node-1", got["tiny-pod-3"], "V100M16 pair")
	require.Equal(t, "tiny-node-0", got["tiny-pod-4"], "T4 only")
	require.Equal(t, "-", got["tiny-pod-5"])
	require.NoError(t, cl.CheckInvariants())
}

func TestJSONFormatsAndQoS(t *testing.T) {
	t.Parallel()
	nodes, err := LoadNodes(testdata + "tiny_nodes.json")
	require.NoError(t, err)
	require.Equal(t, "mig", nodes[0].Devices[0].Isolation.Hardware, "capabilities filled from the table")
	tasks, err := LoadTasks(testdata + "tiny_tasks.json")
	require.NoError(t, err)
	cl, err := model.NewCluster(1)
	require.NoError(t, err)
	for _, n := range nodes {
		_, err := cl.AddNode(n)
		require.NoError(t, err)
	}
	prof, err := LoadProfile("default")
	require.NoError(t, err)
	fw, err := framework.New(plugins.Registry(), prof, cl, framework.Options{})
	require.NoError(t, err)
	fr, _ := fw.Plugin(plugins.NameFragmentation)
	require.NoError(t, fr.(*plugins.Fragmentation).ObserveWorkload(tasks))
	slices := map[string]model.Slice{}
	for i := range tasks {
		res, err := fw.Schedule(context.Background(), &tasks[i], framework.ScheduleOptions{})
		require.NoError(t, err, tasks[i].ID)
		if len(res.Placement.Slices) > 0 {
			slices[tasks[i].ID] = res.Placement.Slices[0]
		}
	}
	// Gold 8 GiB/10% on A100-40GB → MIG 1g.10gb; 20 GiB/20% on 910B3 →
	// vNPU vir10_3c_32g.
	require.Equal(t, "1g.10gb", slices["gold-mig"].Profile)
	require.Equal(t, "vir10_3c_32g", slices["gold-vnpu"].Profile)
	// Silver cannot share the MIG-partitioned device: it takes the other.
	require.NotEqual(t, slices["gold-mig"].Device, slices["silver-share"].Device)
	require.NoError(t, cl.CheckInvariants())
}

func TestTuneOrder(t *testing.T) {
	t.Parallel()
	tasks, err := LoadTasks(testdata + "tiny_pods.csv")
	require.NoError(t, err)
	a := Order(tasks, 7, 1.3, 6000)
	b := Order(tasks, 7, 1.3, 6000)
	require.Equal(t, a, b, "same seed, same order")
	var total int64
	tuned := 0
	for _, tk := range a {
		total += int64(tk.DeviceCount) * int64(tk.ComputeMilli)
		if strings.Contains(tk.ID, "-tune-") {
			tuned++
		}
	}
	// Stops before crossing 1.3 × 6000 = 7800; the largest pod is 2000.
	require.LessOrEqual(t, total, int64(7800))
	require.Positive(t, tuned)
	require.Len(t, a[:6], 6)
}

// TestOpenbDefaultTrace runs the real trace when present: the default
// profile must place at least as much as the FGD reference on seed 42.
func TestOpenbDefaultTrace(t *testing.T) {
	dir := traceDir()
	if _, err := os.Stat(dir + "openb_pod_list_default.csv"); err != nil || testing.Short() {
		t.Skip("openb trace not present (or -short)")
	}
	nodes, err := LoadNodes(dir + "openb_node_list_gpu_node.csv")
	require.NoError(t, err)
	require.Len(t, nodes, 1213)
	tasks, err := LoadTasks(dir + "openb_pod_list_default.csv")
	require.NoError(t, err)
	res := map[string]float64{}
	for _, name := range []string{"default", "fgd"} {
		prof, err := LoadProfile(name)
		require.NoError(t, err)
		r, err := Run(context.Background(), Config{Nodes: nodes, Tasks: tasks, Profile: prof, Tune: 1.3}, 42)
		require.NoError(t, err)
		require.Contains(t, r.Alloc, 130)
		res[name] = r.Alloc[130]
	}
	require.GreaterOrEqual(t, res["default"], res["fgd"])
	require.Greater(t, res["default"], 90.0)
}

// TestOpenbPublishedFigures replays every openb trace with the default
// profile over the paper's seeds 42–51 and compares the mean allocation at
// 130% arrived with FGD's published mean (REFERENCE.md). About a minute of
// CPU, so it runs only with HETEROFLOW_OPENB_FULL=1.
func TestOpenbPublishedFigures(t *testing.T) {
	dir, nodes, seeds := fullOpenb(t)
	prof, err := LoadProfile("default")
	require.NoError(t, err)
	// The bar: the 10-seed mean at 130% arrived is at least FGD's
	// published mean on every trace (measured margins: docs/BENCHMARKS.md).
	tests := []struct {
		trace string
		fgd   float64
	}{
		{"default", 95.39}, {"cpu050", 95.21}, {"cpu100", 95.35}, {"cpu200", 95.05},
		{"gpushare40", 94.15}, {"gpushare60", 91.40}, {"gpuspec10", 94.95}, {"gpuspec20", 94.84},
		{"gpuspec25", 94.74}, {"multigpu20", 95.65}, {"multigpu30", 96.46}, {"multigpu40", 96.99},
	}
	for _, tt := range tests {
		t.Run(tt.trace, func(t *testing.T) {
			t.Parallel()
			tasks, err := LoadTasks(dir + "openb_pod_list_" + tt.trace + ".csv")
			require.NoError(t, err)
			rep, _, err := Replay(context.Background(), Config{Nodes: nodes, Tasks: tasks, Profile: prof, Tune: 1.3}, seeds)
			require.NoError(t, err)
			got := rep.AllocationPercent["130"]
			require.NotNil(t, got)
			t.Logf("%s: %.2f ± %.2f (FGD published %.2f)", tt.trace, got.Mean, got.SD, tt.fgd)
			require.GreaterOrEqual(t, got.Mean, tt.fgd)
		})
	}
}
