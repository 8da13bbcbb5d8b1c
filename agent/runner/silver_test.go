package runner

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/agent/protocol"
	"github.com/heteroflow/heteroflow/receivers/fakesmi"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// fakeCLI runs the simulated vendor programs in-process; every call lands
// in the fakesmi invocation log with its environment and standard input.
type fakeCLI struct{ o fakesmi.Options }

func (f fakeCLI) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	return f.RunEnv(ctx, nil, "", name, args...)
}

func (f fakeCLI) RunEnv(_ context.Context, env []string, stdin string, name string, args ...string) ([]byte, error) {
	o := f.o
	o.Env, o.Stdin = env, strings.NewReader(stdin)
	var buf bytes.Buffer
	err := fakesmi.Run(&buf, o, filepath.Base(name), args)
	return buf.Bytes(), err
}

func newFakeNVIDIA(t *testing.T) (fakeCLI, string) {
	t.Helper()
	dir := t.TempDir()
	p := fakesmi.Profile{Vendor: "nvidia", Model: "NVIDIA H100 80GB HBM3", Count: 2, MemoryMiB: 81559}
	return fakeCLI{fakesmi.Options{Profile: &p, StatePath: filepath.Join(dir, "state.json"), LogPath: filepath.Join(dir, "cli.jsonl")}}, dir
}

func gpuUUID(t *testing.T, cli fakeCLI, i int) string {
	t.Helper()
	out, err := cli.Run(context.Background(), "nvidia-smi", "-L")
	require.NoError(t, err)
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "GPU "+string(rune('0'+i))+":") {
			_, u, _ := strings.Cut(l, "UUID: ")
			return strings.TrimSuffix(u, ")")
		}
	}
	t.Fatalf("no GPU %d in %s", i, out)
	return ""
}

func TestDetectSilver(t *testing.T) {
	t.Parallel()
	none := func(string) (string, error) { return "", errors.New("not found") }
	found := func(n string) (string, error) { return "/usr/bin/" + n, nil }
	s := DetectSilver(none, func(string) bool { return false }, "/var/mps")
	require.Equal(t, Silver{MPSDir: "/var/mps"}, s)
	require.Empty(t, s.Mechanism("nvidia"))
	s = DetectSilver(none, func(p string) bool { return p == "/usr/local/vgpu/libvgpu.so" }, "")
	require.Equal(t, "/usr/local/vgpu/libvgpu.so", s.HAMiLib)
	require.Equal(t, "hami-core", s.Mechanism("nvidia"))
	s = DetectSilver(found, func(string) bool { return true }, "")
	require.Equal(t, "/usr/bin/nvidia-cuda-mps-control", s.MPSControl)
	require.Equal(t, "mps", s.Mechanism("nvidia"), "MPS first when both are there")
	require.Empty(t, s.Mechanism("hygon"), "the agent writes no Silver limits for Hygon")
	require.Equal(t, "/dev/cambricon-split", s.CambriconSplit)
	require.Equal(t, "env-limits", s.Mechanism("cambricon"), "the split driver's node is there")
	require.Empty(t, DetectSilver(none, func(string) bool { return false }, "").Mechanism("cambricon"),
		"no /dev/cambricon-split: CAMBRICON_SPLIT_* would limit nothing")
	require.Empty(t, s.Mechanism("mthreads"), "sGPU is enforced only by Moore Threads' Kubernetes toolkit")

	inv := []inventory.Snapshot{{Vendor: "nvidia", Devices: []inventory.Device{
		{Index: 0, MIGMode: true, Isolation: inventory.Isolation{DriverLimits: "hami-core"}},
		{Index: 1, Isolation: inventory.Isolation{DriverLimits: "hami-core"}}}},
		{Vendor: "mthreads", Devices: []inventory.Device{{Index: 0, Isolation: inventory.Isolation{DriverLimits: "hami-core"}}}}}
	s.Enforce(inv)
	require.Empty(t, inv[0].Devices[0].Isolation.DriverLimits, "MIG mode: no whole-GPU Silver")
	require.Equal(t, "mps", inv[0].Devices[1].Isolation.DriverLimits)
	require.Empty(t, inv[1].Devices[0].Isolation.DriverLimits)
	mlu := []inventory.Snapshot{{Vendor: "cambricon", Devices: []inventory.Device{{Index: 0, Model: "MLU370-X8"}, {Index: 1, Model: "MLU290-M5"}}}}
	s.Enforce(mlu)
	require.Equal(t, "env-limits", mlu[0].Devices[0].Isolation.DriverLimits)
	require.Empty(t, mlu[0].Devices[1].Isolation.DriverLimits, "the memory split is MLU370 only")
	DetectSilver(none, func(string) bool { return false }, "").Enforce(inv)
	require.Empty(t, inv[0].Devices[1].Isolation.DriverLimits, "nothing to enforce Silver with: not offered")
}

// TestSilverMPS: two Silver tasks on one GPU share its MPS control daemon,
// started for the first (GPU alone visible, own pipe and log directories)
// and stopped with `quit` after the last; each client gets its thread
// percentage and pinned memory limit.
func TestSilverMPS(t *testing.T) {
	t.Parallel()
	cli, dir := newFakeNVIDIA(t)
	u := gpuUUID(t, cli, 1)
	iso := &Isolator{CLI: cli, Logger: quietLogger,
		Silver: Silver{MPSControl: "nvidia-cuda-mps-control", MPSDir: filepath.Join(dir, "mps")}}
	slice := func(mem, pct int) []protocol.DeviceSlice {
		return []protocol.DeviceSlice{{Vendor: "nvidia", Index: 1, UUID: u, MemoryMiB: mem, ComputePercent: pct, Isolation: "mps"}}
	}
	ctx := context.Background()
	a, err := iso.Prepare(ctx, "silver", slice(8192, 25))
	require.NoError(t, err)
	b, err := iso.Prepare(ctx, "silver", slice(16384, 50))
	require.NoError(t, err)
	mpsDir := filepath.Join(dir, "mps", u)
	require.Equal(t, map[string]string{
		"CUDA_MPS_PIPE_DIRECTORY": filepath.Join(mpsDir, "pipe"), "CUDA_MPS_LOG_DIRECTORY": filepath.Join(mpsDir, "log"),
		"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE": "25", "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT": "0=8192M"}, a.Env)
	require.Equal(t, "50", b.Env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"])
	require.Equal(t, "0=16384M", b.Env["CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"])
	require.True(t, a.IPCHost)
	require.Contains(t, a.Mounts, mpsDir+":"+mpsDir)
	st, err := fakesmi.LoadState(cli.o.StatePath)
	require.NoError(t, err)
	require.Equal(t, []fakesmi.MPSDaemon{{PipeDir: filepath.Join(mpsDir, "pipe"), Devices: u}}, st.MPS)

	require.NoError(t, a.Release(ctx))
	st, _ = fakesmi.LoadState(cli.o.StatePath)
	require.Len(t, st.MPS, 1, "the other client still runs")
	require.NoError(t, b.Release(ctx))
	st, _ = fakesmi.LoadState(cli.o.StatePath)
	require.Empty(t, st.MPS, "stopped after the last client")

	log, err := fakesmi.ReadLog(cli.o.LogPath)
	require.NoError(t, err)
	var mps []fakesmi.Invocation
	for _, inv := range log {
		if inv.Tool == "nvidia-cuda-mps-control" {
			inv.Time = inv.Time.UTC().Truncate(0)
			mps = append(mps, inv)
		}
	}
	env := map[string]string{"CUDA_VISIBLE_DEVICES": u, "CUDA_MPS_PIPE_DIRECTORY": filepath.Join(mpsDir, "pipe"),
		"CUDA_MPS_LOG_DIRECTORY": filepath.Join(mpsDir, "log")}
	require.Len(t, mps, 2, "one start, one stop")
	require.Equal(t, []string{"-d"}, mps[0].Args)
	require.Equal(t, env, mps[0].Env)
	require.Empty(t, mps[1].Args)
	require.Equal(t, env, mps[1].Env)
	require.Equal(t, "quit\n", mps[1].Stdin)
	for _, d := range []string{"pipe", "log"} {
		fi, err := os.Stat(filepath.Join(mpsDir, d))
		require.NoError(t, err)
		require.True(t, fi.IsDir())
	}
}

func TestSilverHAMiCoreAndRefusals(t *testing.T) {
	t.Parallel()
	cli, dir := newFakeNVIDIA(t)
	ctx := context.Background()
	two := []protocol.DeviceSlice{
		{Vendor: "nvidia", Index: 0, UUID: "GPU-a", MemoryMiB: 8192, ComputePercent: 30, Isolation: "hami-core"},
		{Vendor: "nvidia", Index: 1, UUID: "GPU-b", MemoryMiB: 8192, ComputePercent: 40, Isolation: "hami-core"}}
	iso := &Isolator{CLI: cli, Logger: quietLogger, Silver: Silver{HAMiLib: "/usr/local/vgpu/libvgpu.so"}}
	p, err := iso.Prepare(ctx, "silver", two)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"LD_PRELOAD": "/usr/local/vgpu/libvgpu.so",
		"CUDA_DEVICE_MEMORY_LIMIT": "8192m", "CUDA_DEVICE_SM_LIMIT": "30"}, p.Env)
	require.Equal(t, []string{"/usr/local/vgpu/libvgpu.so:/usr/local/vgpu/libvgpu.so:ro"}, p.Mounts)
	require.NoError(t, p.Release(ctx))
	_, err = os.Stat(filepath.Join(dir, "cli.jsonl"))
	require.True(t, os.IsNotExist(err), "HAMi-core needs no CLI call")

	bare := &Isolator{CLI: cli, Logger: quietLogger}
	_, err = bare.Prepare(ctx, "silver", two)
	require.ErrorContains(t, err, "libvgpu.so is not installed")
	two[0].Isolation, two[1].Isolation = "mps", "mps"
	_, err = bare.Prepare(ctx, "silver", two)
	require.ErrorContains(t, err, "nvidia-cuda-mps-control is not installed")
	mps := &Isolator{CLI: cli, Logger: quietLogger, Silver: Silver{MPSControl: "nvidia-cuda-mps-control", MPSDir: dir}}
	_, err = mps.Prepare(ctx, "silver", two)
	require.ErrorContains(t, err, "one GPU per task")
	two[0].Isolation, two[1].Isolation = "", ""
	_, err = bare.Prepare(ctx, "silver", two[:1])
	require.ErrorContains(t, err, "neither CUDA MPS nor HAMi-core")
}

func TestContainerCarriesSilverMounts(t *testing.T) {
	t.Parallel()
	argv := ContainerArgv("docker", protocol.TaskSpec{TaskID: 1, Image: "img"},
		[]protocol.DeviceSlice{{Vendor: "nvidia", Index: 0, UUID: "GPU-a"}},
		ContainerOptions{Mounts: []string{"/var/mps/GPU-a:/var/mps/GPU-a"}, IPCHost: true})
	require.Contains(t, strings.Join(argv, " "), "-v /var/mps/GPU-a:/var/mps/GPU-a")
	require.Contains(t, argv, "--ipc=host")
}

// TestSilverBestEffortSetsNoLimits: a Silver slice the scheduler placed
// best-effort (the node enforces nothing, the task allowed it) starts with
// visibility only — no MPS daemon, no preload, no refusal.
func TestSilverBestEffortSetsNoLimits(t *testing.T) {
	t.Parallel()
	cli, dir := newFakeNVIDIA(t)
	ctx := context.Background()
	bare := &Isolator{CLI: cli, Logger: quietLogger}
	one := []protocol.DeviceSlice{{Vendor: "nvidia", Index: 0, UUID: "GPU-a", MemoryMiB: 8192, ComputePercent: 30,
		Isolation: protocol.IsolationBestEffort}}
	p, err := bare.Prepare(ctx, "silver", one)
	require.NoError(t, err)
	require.Empty(t, p.Env)
	require.Empty(t, p.Mounts)
	require.False(t, p.IPCHost)
	require.NoError(t, p.Release(ctx))
	_, err = os.Stat(filepath.Join(dir, "cli.jsonl"))
	require.True(t, os.IsNotExist(err), "best effort needs no CLI call")
}

// TestCambriconSplitInAContainer: a Silver task on a card with Cambricon's
// split driver gets the split's node and its program (read-only) beside the
// card's own nodes, as Cambricon's device plugin hands them out.
func TestCambriconSplitInAContainer(t *testing.T) {
	t.Parallel()
	iso := &Isolator{CLI: &recorder{}, Logger: quietLogger,
		Silver: Silver{CambriconSplit: "/dev/cambricon-split", CambriconMounts: []string{"/usr/bin/smlu-containerd"}}}
	p, err := iso.Prepare(context.Background(), "silver", []protocol.DeviceSlice{{Vendor: "cambricon", Index: 2, MemoryMiB: 4096}})
	require.NoError(t, err)
	argv := strings.Join(ContainerArgv("docker", protocol.TaskSpec{TaskID: 1, Image: "img"}, p.Devices,
		ContainerOptions{Mounts: p.Mounts, DeviceNodes: p.DeviceNodes}), " ")
	require.Contains(t, argv, "--device /dev/cambricon_dev2")
	require.Contains(t, argv, "--device /dev/cambricon-split")
	require.Contains(t, argv, "-v /usr/bin/smlu-containerd:/usr/bin/smlu-containerd:ro")
	require.Equal(t, "4", p.Env["CAMBRICON_SPLIT_MEMS"])
}
