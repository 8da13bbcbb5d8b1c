package runner

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/agent/protocol"
	"github.com/heteroflow/heteroflow/receivers/fakesmi"
)

func TestPolice(t *testing.T) {
	t.Parallel()
	on := func(uuid string, share int) []protocol.DeviceSlice {
		return []protocol.DeviceSlice{{Vendor: "nvidia", UUID: uuid, MemoryMiB: share}}
	}
	tasks := []PolicedTask{
		{TaskID: 1, QoS: "bronze", PIDs: []int{10, 11}, Devices: on("GPU-a", 8000)},
		{TaskID: 2, QoS: "bronze", PIDs: []int{20}, Devices: on("GPU-a", 8000)},
		{TaskID: 3, QoS: "silver", PIDs: []int{30}, Devices: on("GPU-a", 1000)},
		{TaskID: 4, QoS: "gold", PIDs: []int{40}, Devices: on("GPU-a", 1000)},
		{TaskID: 5, QoS: "bronze", PIDs: []int{50}, Devices: on("GPU-b", 1000)},
	}
	procs := []ProcMemory{
		{PID: 10, Device: "GPU-a", MemoryMiB: 6000}, {PID: 11, Device: "GPU-a", MemoryMiB: 6000}, // task 1: 12000 / 8000
		{PID: 20, Device: "GPU-a", MemoryMiB: 9000},                                                // task 2: 9000 / 8000
		{PID: 30, Device: "GPU-a", MemoryMiB: 30000}, {PID: 40, Device: "GPU-a", MemoryMiB: 20000}, // far over, never policed
		{PID: 50, Device: "GPU-b", MemoryMiB: 5000},
		{PID: 99, Device: "GPU-a", MemoryMiB: 3000}, // not ours
	}
	short := []DeviceMemory{{Device: "GPU-a", TotalMiB: 81559, UsedMiB: 80000}, {Device: "GPU-b", TotalMiB: 81559, UsedMiB: 1000}}
	ev := Police(short, procs, tasks)
	require.Equal(t, []Eviction{{TaskID: 1, Device: "GPU-a", UsedMiB: 12000, ShareMiB: 8000, FreeMiB: 1559}}, ev,
		"the Bronze task furthest over its share on the short GPU; GPU-b has room")
	require.Contains(t, ev[0].Reason(), "used 12000 MiB on GPU-a, over its share of 8000 MiB")

	roomy := []DeviceMemory{{Device: "GPU-a", TotalMiB: 81559, UsedMiB: 60000}}
	require.Empty(t, Police(roomy, procs, tasks), "no device short: nothing stopped")
	onlyGoldSilver := tasks[2:4]
	require.Empty(t, Police(short, procs, onlyGoldSilver), "never Gold or Silver")
	within := []PolicedTask{{TaskID: 6, QoS: "bronze", PIDs: []int{10}, Devices: on("GPU-a", 7000)}}
	require.Empty(t, Police(short, procs, within), "within its share")
	both := []PolicedTask{{TaskID: 7, QoS: "bronze", PIDs: []int{10, 50},
		Devices: append(on("GPU-a", 1000), on("GPU-b", 1000)...)}}
	bothShort := []DeviceMemory{short[0], {Device: "GPU-b", TotalMiB: 81559, UsedMiB: 81000}}
	require.Len(t, Police(bothShort, procs, both), 1, "stopped once")
}

// TestBronzePolicingStopsTheTask: a running Bronze task whose process uses
// more than its share of a GPU that runs short (as the simulated nvidia-smi
// reports) is stopped as failed with the reason, and nvidia-smi was asked
// exactly for per-GPU and per-process memory.
func TestBronzePolicingStopsTheTask(t *testing.T) {
	skipUnlessUnix(t)
	t.Parallel()
	cli, dir := newFakeNVIDIA(t)
	u := gpuUUID(t, cli, 1)
	r := newTestRunner(t, cli)
	dev := []protocol.DeviceSlice{{Vendor: "nvidia", Index: 1, UUID: u, MemoryMiB: 4096}}
	h, err := r.Start(context.Background(), protocol.TaskSpec{TaskID: 9, QoS: "bronze", Command: []string{"sleep", "60"}, Devices: dev})
	require.NoError(t, err)
	state := filepath.Join(dir, "state.json")
	require.NoError(t, fakesmi.SetDevice(state, 1, fakesmi.DeviceState{MemoryUsedMiB: 80000}))
	require.NoError(t, fakesmi.UpdateState(state, func(s *fakesmi.State) error {
		s.Processes = []fakesmi.Process{{PID: h.PID(), Device: 1, MemoryMiB: 9000}}
		return nil
	}))
	devs, procs, err := NVIDIAMemory(context.Background(), cli)
	require.NoError(t, err)
	require.Equal(t, []ProcMemory{{PID: h.PID(), Device: u, MemoryMiB: 9000}}, procs)
	ev := Police(devs, procs, []PolicedTask{{TaskID: 9, QoS: "bronze", PIDs: []int{h.PID()}, Devices: dev}})
	require.Len(t, ev, 1)
	h.Evict(ev[0].Reason())
	res := h.Wait()
	require.Equal(t, protocol.PhaseFailed, res.Phase, "failed, so the server requeues it when retries allow")
	require.Contains(t, res.Reason, "bronze memory policing: used 9000 MiB on "+u)

	log, err := fakesmi.ReadLog(cli.o.LogPath)
	require.NoError(t, err)
	var asked [][]string
	for _, c := range log[1:] { // after gpuUUID's nvidia-smi -L
		asked = append(asked, c.Args)
	}
	require.Equal(t, [][]string{
		{"--query-gpu=uuid,memory.total,memory.used", "--format=csv,noheader,nounits"},
		{"--query-compute-apps=pid,gpu_uuid,used_memory", "--format=csv,noheader,nounits"},
	}, asked)
}
