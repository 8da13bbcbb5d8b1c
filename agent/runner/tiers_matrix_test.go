package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/agent/protocol"
	"github.com/heteroflow/heteroflow/receivers/fakesmi"
	"github.com/heteroflow/heteroflow/receivers/vendorcatalog"
)

// tierCase is one vendor × tier through the Isolator against the simulated
// CLIs: the exact commands issued while preparing and while releasing, the
// task's environment (visibility and limit variables), and what is left in
// the simulated driver afterwards (nothing). "{P}" in an expectation stands
// for the partition the CLI created (its id, or its MIG UUID).
type tierCase struct {
	vendor, tier string
	model        string // fakesmi profile model ("" = the vendor's default below)
	silver       Silver
	slice        protocol.DeviceSlice
	container    bool     // visibility through the runtime's variable and /dev nodes
	prepare      []string // commands while preparing
	release      []string // commands while releasing
	env          map[string]string
	nodes        []string // extra /dev nodes a container gets for the isolation
	err          string   // Prepare refuses with this
}

var tierModels = map[string]string{
	"nvidia": "NVIDIA H100 80GB HBM3", "amd": "AMD Instinct MI210", "hygon": "K100_AI", "ascend": "910B3",
	"cambricon": "MLU370-X8", "kunlunxin": "R300", "mthreads": "MTT S4000", "biren": "BR104",
	"iluvatar": "BI-V150", "metax": "MXC550", "enflame": "S60",
}

func tierCases(mpsDir string) []tierCase {
	split := Silver{CambriconSplit: "/dev/cambricon-split", CambriconMounts: []string{"/usr/bin/smlu-containerd"}}
	whole := func(vendor string, idx int) protocol.DeviceSlice {
		return protocol.DeviceSlice{Vendor: vendor, Index: idx}
	}
	noSilver := "no driver-level limits (QoS silver)"
	var out []tierCase
	// NVIDIA: Gold a MIG instance created and destroyed, Silver CUDA MPS or
	// HAMi-core (or refused where the node has neither), Bronze visibility.
	out = append(out,
		tierCase{vendor: "nvidia", tier: "gold", slice: protocol.DeviceSlice{Vendor: "nvidia", Index: 1, UUID: "{GPU1}", Profile: "1g.10gb", Isolation: protocol.IsolationMIG},
			prepare: []string{"nvidia-smi -L", "nvidia-smi mig -i 1 -cgi 1g.10gb -C", "nvidia-smi -L"},
			release: []string{"nvidia-smi mig -i 1 -dci -gi {GI} -ci 0", "nvidia-smi mig -i 1 -dgi -gi {GI}"},
			env:     map[string]string{"CUDA_VISIBLE_DEVICES": "{P}"}},
		tierCase{vendor: "nvidia", tier: "silver", silver: Silver{MPSControl: "nvidia-cuda-mps-control", MPSDir: mpsDir},
			slice:   protocol.DeviceSlice{Vendor: "nvidia", Index: 0, UUID: "{GPU0}", MemoryMiB: 8192, ComputePercent: 25, Isolation: protocol.IsolationMPS},
			prepare: []string{"nvidia-cuda-mps-control -d"}, release: []string{"nvidia-cuda-mps-control <quit"},
			env: map[string]string{"CUDA_VISIBLE_DEVICES": "{GPU0}", "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE": "25",
				"CUDA_MPS_PINNED_DEVICE_MEM_LIMIT": "0=8192M", "CUDA_MPS_PIPE_DIRECTORY": filepath.Join(mpsDir, "{GPU0}", "pipe"),
				"CUDA_MPS_LOG_DIRECTORY": filepath.Join(mpsDir, "{GPU0}", "log")}},
		tierCase{vendor: "nvidia", tier: "silver", silver: Silver{HAMiLib: "/usr/local/vgpu/libvgpu.so"},
			slice: protocol.DeviceSlice{Vendor: "nvidia", Index: 0, UUID: "{GPU0}", MemoryMiB: 8192, ComputePercent: 25, Isolation: protocol.IsolationHAMiCore},
			env: map[string]string{"CUDA_VISIBLE_DEVICES": "{GPU0}", "LD_PRELOAD": "/usr/local/vgpu/libvgpu.so",
				"CUDA_DEVICE_MEMORY_LIMIT": "8192m", "CUDA_DEVICE_SM_LIMIT": "25"}},
		tierCase{vendor: "nvidia", tier: "silver", slice: protocol.DeviceSlice{Vendor: "nvidia", Index: 0, UUID: "{GPU0}", MemoryMiB: 8192},
			err: "enforces neither CUDA MPS nor HAMi-core"},
		tierCase{vendor: "nvidia", tier: "bronze", slice: protocol.DeviceSlice{Vendor: "nvidia", Index: 1, UUID: "{GPU1}", MemoryMiB: 4096},
			env: map[string]string{"CUDA_VISIBLE_DEVICES": "{GPU1}"}},
	)
	// Ascend: Gold a vNPU with the id the agent chose, read back; Hygon:
	// Gold a vDCU created, listed and destroyed. Neither has Silver.
	out = append(out,
		tierCase{vendor: "ascend", tier: "gold", slice: protocol.DeviceSlice{Vendor: "ascend", Index: 1, Profile: "vir05_1c_16g", Isolation: protocol.IsolationVNPU},
			prepare: []string{"npu-smi set -t create-vnpu -i 1 -c 0 -f vir05_1c_16g -v 116"},
			release: []string{"npu-smi set -t destroy-vnpu -i 1 -c 0 -v 116"},
			env:     map[string]string{"ASCEND_RT_VISIBLE_DEVICES": "116"}},
		tierCase{vendor: "ascend", tier: "silver", slice: protocol.DeviceSlice{Vendor: "ascend", Index: 0, MemoryMiB: 1024}, err: noSilver},
		tierCase{vendor: "ascend", tier: "bronze", slice: whole("ascend", 1), env: map[string]string{"ASCEND_RT_VISIBLE_DEVICES": "1"}},
		tierCase{vendor: "hygon", tier: "gold", slice: protocol.DeviceSlice{Vendor: "hygon", Index: 1, Isolation: protocol.IsolationVDCU, ComputeUnits: 20, MemoryMiB: 16384},
			prepare: []string{"hy-smi virtual -create-vdevices 1 -d 1 -vdevice-compute-units 20 -vdevice-memory-size 16384", "hy-smi virtual -show-vdevice-info"},
			release: []string{"hy-smi virtual -destroy-vdevice {P}"},
			env:     map[string]string{"HIP_VISIBLE_DEVICES": "{P}"}},
		tierCase{vendor: "hygon", tier: "silver", slice: protocol.DeviceSlice{Vendor: "hygon", Index: 0, MemoryMiB: 1024}, err: noSilver},
		tierCase{vendor: "hygon", tier: "bronze", slice: whole("hygon", 1), env: map[string]string{"HIP_VISIBLE_DEVICES": "1"}},
	)
	// Cambricon: Silver the memory split where the split driver is there
	// (refused where it is not); Gold a whole card (sMLU/MIM instances are
	// made by Cambricon's device plugin through libcndev, not a host CLI).
	out = append(out,
		tierCase{vendor: "cambricon", tier: "gold", slice: whole("cambricon", 1), env: map[string]string{"MLU_VISIBLE_DEVICES": "1"}},
		tierCase{vendor: "cambricon", tier: "silver", silver: split, slice: protocol.DeviceSlice{Vendor: "cambricon", Index: 1, MemoryMiB: 8192},
			env: map[string]string{"MLU_VISIBLE_DEVICES": "1", "CAMBRICON_SPLIT_ENABLE": "1",
				"CAMBRICON_SPLIT_VISIBLE_DEVICES": "1", "CAMBRICON_SPLIT_MEMS": "8"},
			nodes: []string{"/dev/cambricon-split"}},
		tierCase{vendor: "cambricon", tier: "silver", slice: protocol.DeviceSlice{Vendor: "cambricon", Index: 1, MemoryMiB: 8192},
			err: "/dev/cambricon-split is not present"},
		tierCase{vendor: "cambricon", tier: "bronze", slice: whole("cambricon", 0), env: map[string]string{"MLU_VISIBLE_DEVICES": "0"}},
	)
	// AMD: Silver HIP_DEVICE_MEMORY_LIMIT; the rest: Gold a whole device,
	// Silver refused, Bronze visibility (Biren only through /dev nodes in a
	// container: it has no visibility variable).
	out = append(out,
		tierCase{vendor: "amd", tier: "gold", slice: whole("amd", 1), env: map[string]string{"HIP_VISIBLE_DEVICES": "1"}},
		tierCase{vendor: "amd", tier: "silver", slice: protocol.DeviceSlice{Vendor: "amd", Index: 1, MemoryMiB: 8000},
			env: map[string]string{"HIP_VISIBLE_DEVICES": "1", "HIP_DEVICE_MEMORY_LIMIT": "8000m"}},
		tierCase{vendor: "amd", tier: "bronze", slice: whole("amd", 0), env: map[string]string{"HIP_VISIBLE_DEVICES": "0"}},
	)
	for _, v := range []struct{ vendor, variable string }{
		{"kunlunxin", "XPU_VISIBLE_DEVICES"}, {"mthreads", "MUSA_VISIBLE_DEVICES"}, {"iluvatar", "CUDA_VISIBLE_DEVICES"},
		{"metax", "CUDA_VISIBLE_DEVICES"}, {"enflame", "TOPS_VISIBLE_DEVICES"},
	} {
		out = append(out,
			tierCase{vendor: v.vendor, tier: "gold", slice: whole(v.vendor, 1), env: map[string]string{v.variable: "1"}},
			tierCase{vendor: v.vendor, tier: "silver", slice: protocol.DeviceSlice{Vendor: v.vendor, Index: 1, MemoryMiB: 1024}, err: noSilver},
			tierCase{vendor: v.vendor, tier: "bronze", slice: whole(v.vendor, 0), env: map[string]string{v.variable: "0"}})
	}
	out = append(out,
		tierCase{vendor: "biren", tier: "gold", container: true, slice: whole("biren", 1), env: map[string]string{}, nodes: []string{"/dev/biren/card_1"}},
		tierCase{vendor: "biren", tier: "silver", slice: protocol.DeviceSlice{Vendor: "biren", Index: 1, MemoryMiB: 1024}, err: noSilver},
		tierCase{vendor: "biren", tier: "bronze", container: true, slice: whole("biren", 0), env: map[string]string{}, nodes: []string{"/dev/biren/card_0"}},
	)
	return out
}

// TestEveryVendorTierRecordsCommandsEnvAndCleanUp runs every catalog vendor
// at every tier through the Isolator on the simulated CLIs, and fails when
// a vendor or tier has no case.
func TestEveryVendorTierRecordsCommandsEnvAndCleanUp(t *testing.T) {
	t.Parallel()
	mpsDir := filepath.Join(t.TempDir(), "mps")
	cases := tierCases(mpsDir)
	seen := map[string]bool{}
	for _, tc := range cases {
		seen[tc.vendor+"/"+tc.tier] = true
	}
	for _, v := range vendorcatalog.IDs() {
		for _, tier := range []string{"gold", "silver", "bronze"} {
			require.Truef(t, seen[v+"/"+tier], "no recorded case for %s at %s", v, tier)
		}
	}
	for _, tc := range cases {
		name := tc.vendor + "/" + tc.tier
		if tc.silver.MPSControl != "" {
			name += "/mps"
		} else if tc.silver.HAMiLib != "" {
			name += "/hami-core"
		} else if tc.err != "" {
			name += "/refused"
		}
		t.Run(name, func(t *testing.T) { runTierCase(t, tc) })
	}
}

func runTierCase(t *testing.T, tc tierCase) {
	dir := t.TempDir()
	p := fakesmi.Profile{Vendor: tc.vendor, Model: tierModels[tc.vendor], Count: 2, MemoryMiB: 65536}
	cli := fakeCLI{fakesmi.Options{Profile: &p, StatePath: filepath.Join(dir, "s.json"), LogPath: filepath.Join(dir, "l.jsonl")}}
	ctx := context.Background()
	subst := map[string]string{}
	if tc.vendor == "nvidia" {
		subst["{GPU0}"], subst["{GPU1}"] = gpuUUID(t, cli, 0), gpuUUID(t, cli, 1)
	}
	fill := func(s string) string {
		for k, v := range subst {
			s = strings.ReplaceAll(s, k, v)
		}
		return s
	}
	slice := tc.slice
	slice.UUID = fill(slice.UUID)
	silver := tc.silver
	silver.MPSDir = fill(silver.MPSDir)
	iso := &Isolator{CLI: cli, Logger: quietLogger, Silver: silver}
	mark := len(readCalls(t, cli))

	prep, err := iso.Prepare(ctx, tc.tier, []protocol.DeviceSlice{slice})
	if tc.err != "" {
		require.ErrorContains(t, err, tc.err)
		require.Empty(t, readCalls(t, cli)[mark:], "a refused tier issues no command")
		return
	}
	require.NoError(t, err)
	d := prep.Devices[0]
	subst["{P}"] = d.PartitionID
	if d.PartitionUUID != "" {
		subst["{P}"] = d.PartitionUUID
	}
	subst["{GI}"] = d.PartitionID
	calls := append([]string{}, readCalls(t, cli)[mark:]...)
	require.Equal(t, fillAll(fill, tc.prepare), calls, "commands while preparing")

	vis, err := VisibilityEnv(prep.Devices, tc.container)
	require.NoError(t, err)
	env := map[string]string{}
	for k, v := range vis {
		env[k] = v
	}
	for k, v := range prep.Env {
		env[k] = v
	}
	want := map[string]string{}
	for k, v := range tc.env {
		want[k] = fill(v)
	}
	require.Equal(t, want, env, "the task's visibility and limit variables")
	if tc.container {
		require.Equal(t, tc.nodes, DeviceNodes(prep.Devices))
	} else {
		require.Equal(t, tc.nodes, prep.DeviceNodes)
	}

	mark = len(readCalls(t, cli))
	require.NoError(t, prep.Release(ctx))
	require.Equal(t, fillAll(fill, tc.release), append([]string{}, readCalls(t, cli)[mark:]...), "clean-up commands")
	st, err := fakesmi.LoadState(cli.o.StatePath)
	if errors.Is(err, os.ErrNotExist) {
		return // never written: nothing was created
	}
	require.NoError(t, err)
	require.Empty(t, st.Partitions, "no partition left behind")
	require.Empty(t, st.MPS, "no MPS daemon left behind")
}

// readCalls lists the simulated CLI's log as command lines; a standard
// input is shown as "<input" (the MPS control daemon's quit).
func readCalls(t *testing.T, cli fakeCLI) []string {
	t.Helper()
	log, err := fakesmi.ReadLog(cli.o.LogPath)
	if err != nil {
		return nil
	}
	var out []string
	for _, c := range log {
		line := strings.Join(append([]string{c.Tool}, c.Args...), " ")
		if c.Stdin != "" {
			line += " <" + strings.TrimSpace(c.Stdin)
		}
		out = append(out, line)
	}
	return out
}

func fillAll(fill func(string) string, xs []string) []string {
	out := []string{}
	for _, x := range xs {
		out = append(out, fill(x))
	}
	return out
}
