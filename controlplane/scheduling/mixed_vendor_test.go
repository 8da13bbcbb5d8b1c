package scheduling

import (
	"bytes"
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/agent/protocol"
	"github.com/heteroflow/heteroflow/agent/runner"
	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/receivers/fakesmi"
	"github.com/heteroflow/heteroflow/receivers/inventory"
	"github.com/heteroflow/heteroflow/receivers/smi"
	"github.com/heteroflow/heteroflow/receivers/vendorcatalog"
	"github.com/heteroflow/heteroflow/scheduler/framework"
	"github.com/heteroflow/heteroflow/scheduler/model"
)

// mixedHost simulates one host with NVIDIA and Ascend devices: each
// vendor's tools answer from its own profile; every call is logged.
type mixedHost struct{ opts map[string]fakesmi.Options }

func (h mixedHost) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	return h.RunEnv(ctx, nil, "", name, args...)
}

func (h mixedHost) RunEnv(_ context.Context, env []string, stdin string, name string, args ...string) ([]byte, error) {
	tool := filepath.Base(name)
	o, ok := h.opts[vendorcatalog.ToolVendor(tool)]
	if !ok {
		return nil, smi.ErrToolNotFound
	}
	o.Env, o.Stdin = env, strings.NewReader(stdin)
	var buf bytes.Buffer
	err := fakesmi.Run(&buf, o, tool, args)
	return buf.Bytes(), err
}

// TestMixedVendorNode: NVIDIA + Ascend in one host are both detected,
// scheduled by vendor and tier, and isolated each through its own CLI and
// variables; the MIG GPU takes no whole-GPU work and Ascend no Silver.
func TestMixedVendorNode(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	log := filepath.Join(dir, "cli.jsonl")
	nv := fakesmi.Profile{Vendor: "nvidia", Model: "NVIDIA H100 80GB HBM3", Count: 2, MemoryMiB: 81559,
		Partitions: []fakesmi.PartitionSpec{{Device: 0, Profile: "3g.40gb", ID: 1}}}
	as := fakesmi.Profile{Vendor: "ascend", Model: "910B3", Count: 2, MemoryMiB: 65536}
	host := mixedHost{opts: map[string]fakesmi.Options{
		"nvidia": {Profile: &nv, StatePath: filepath.Join(dir, "nv.json"), LogPath: log},
		"ascend": {Profile: &as, StatePath: filepath.Join(dir, "as.json"), LogPath: log},
	}}
	ctx := context.Background()

	// Detection: every catalog vendor's CLI is tried; two answer.
	var inv []inventory.Snapshot
	for _, v := range vendorcatalog.IDs() {
		snap, err := smi.Collect(ctx, v, host.Run)
		if err != nil {
			require.True(t, smi.Unavailable(err), "%s: %v", v, err)
			continue
		}
		inv = append(inv, *snap)
	}
	require.Len(t, inv, 2)
	require.Equal(t, []string{"nvidia", "ascend"}, []string{inv[0].Vendor, inv[1].Vendor})
	runner.Silver{}.Enforce(inv) // no MPS, no HAMi-core on this host

	node := &controlplane.Node{ID: "mixed", Hostname: "mixed", CPUCount: 32, MemoryTotalMiB: 256000, Inventory: inv,
		State: controlplane.NodeOnline}
	mn, _, err := modelNode(node)
	require.NoError(t, err)
	require.Len(t, mn.Devices, 4)
	snap, err := newSnapshot(1)
	require.NoError(t, err)
	_, err = snap.syncNodes([]*controlplane.Node{node})
	require.NoError(t, err)
	fw, err := framework.New(registry(snap, nil), DefaultProfile(), snap.cl, framework.Options{Seed: 1})
	require.NoError(t, err)
	schedule := func(id, vendor string, qos model.QoS, mem int64, pct float64) *model.Placement {
		r := &model.Request{ID: id, DeviceCount: 1, MemoryMiB: mem, ComputePercent: pct, Vendor: vendor, QoS: qos}
		res, err := fw.Schedule(ctx, r, framework.ScheduleOptions{})
		if err != nil {
			return nil
		}
		return res.Placement
	}
	slices := func(p *model.Placement) []protocol.DeviceSlice {
		var out []protocol.DeviceSlice
		for _, sl := range p.Slices {
			d := mn.Devices[sl.Device]
			out = append(out, protocol.DeviceSlice{Vendor: d.Vendor, Index: d.Index, UUID: d.UUID, MemoryMiB: int(sl.MemoryMiB),
				ComputePercent: int(sl.ComputeMilli) / 10, Isolation: sl.Isolation, Profile: sl.Profile})
		}
		return out
	}

	gold := schedule("gold-nv", "nvidia", model.QoSGold, 0, 100)
	require.NotNil(t, gold)
	require.Equal(t, 1, gold.Slices[0].DeviceIndex, "the whole-GPU ask goes to the GPU not in MIG mode")
	require.Nil(t, schedule("bronze-nv", "nvidia", model.QoSBronze, 1024, 10), "GPU 1 is taken whole; the MIG GPU shares nothing")
	require.Nil(t, schedule("silver-nv", "nvidia", model.QoSSilver, 1024, 10), "nothing enforces Silver here")
	require.Nil(t, schedule("silver-as", "ascend", model.QoSSilver, 1024, 10), "Ascend slices only through vNPU")
	npu := schedule("gold-as", "ascend", model.QoSGold, 16384, 25)
	require.NotNil(t, npu)
	require.Equal(t, "vir05_1c_16g", npu.Slices[0].Profile)

	// The agent isolates each with its vendor's CLI and variables.
	iso := &runner.Isolator{CLI: host}
	pg, err := iso.Prepare(ctx, "gold", slices(gold))
	require.NoError(t, err)
	env, err := runner.VisibilityEnv(pg.Devices, false)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"CUDA_VISIBLE_DEVICES": *inv[0].Devices[1].UUID}, env)
	pa, err := iso.Prepare(ctx, "gold", slices(npu))
	require.NoError(t, err)
	env, err = runner.VisibilityEnv(pa.Devices, false)
	require.NoError(t, err)
	vnpu := pa.Devices[0].PartitionID
	require.Equal(t, map[string]string{"ASCEND_RT_VISIBLE_DEVICES": vnpu}, env)
	both, err := runner.VisibilityEnv(append(pg.Devices, pa.Devices...), false)
	require.NoError(t, err)
	require.Len(t, both, 2, "one task on both vendors gets both variables")
	require.NoError(t, pg.Release(ctx))
	require.NoError(t, pa.Release(ctx))

	calls, err := fakesmi.ReadLog(log)
	require.NoError(t, err)
	var isolation []string
	for _, c := range calls {
		if len(c.Args) > 0 && c.Args[0] == "set" {
			isolation = append(isolation, c.Tool+" "+strings.Join(c.Args, " "))
		}
	}
	chip := npu.Slices[0].DeviceIndex
	require.Equal(t, []string{
		"npu-smi set -t create-vnpu -i " + itoa(chip) + " -c 0 -f vir05_1c_16g -v " + vnpu,
		"npu-smi set -t destroy-vnpu -i " + itoa(chip) + " -c 0 -v " + vnpu,
	}, isolation, "exactly one create and its destroy; the whole GPU needs no CLI call")
}

func itoa(i int) string { return strconv.Itoa(i) }
