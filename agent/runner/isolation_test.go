package runner

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/agent/protocol"
)

// fakeMIG answers nvidia-smi like a GPU on which one MIG instance appears
// after -cgi/-cci.
func fakeMIG() *recorder {
	created := false
	return &recorder{answers: func(line string) (string, error) {
		switch {
		case line == "nvidia-smi -L":
			out := "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0000)\n" +
				"  MIG 1g.10gb     Device  0: (UUID: MIG-existing)\n" +
				"GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-1111)\n"
			if created {
				out += "  MIG 1g.10gb     Device  0: (UUID: MIG-new-1)\n"
			}
			return out, nil
		case strings.Contains(line, "-cgi"):
			created = true
			return "Successfully created GPU instance ID  5 on GPU  1 using profile MIG 1g.10gb (ID 19)\n" +
				"Successfully created compute instance ID  0 on GPU  1 GPU instance ID  5 using profile MIG 1g.10gb (ID  0)\n", nil
		}
		return "", nil
	}}
}

func TestGoldMIGCreatedAndDestroyed(t *testing.T) {
	skipUnlessUnix(t)
	t.Parallel()
	cli := fakeMIG()
	r := newTestRunner(t, cli)
	h, err := r.Start(context.Background(), protocol.TaskSpec{TaskID: 30, QoS: "gold",
		Command: []string{"sh", "-c", "echo $CUDA_VISIBLE_DEVICES"},
		Devices: []protocol.DeviceSlice{{Vendor: "nvidia", Index: 1, UUID: "GPU-1111",
			Isolation: protocol.IsolationMIG, Profile: "1g.10gb"}}})
	require.NoError(t, err)
	require.Equal(t, protocol.PhaseSucceeded, h.Wait().Phase)
	require.Equal(t, "MIG-new-1\n", readAll(t, h, "stdout"))
	require.Equal(t, []string{
		"nvidia-smi -L",
		"nvidia-smi mig -i 1 -cgi 1g.10gb -C",
		"nvidia-smi -L",
		// removed on exit, compute instance first
		"nvidia-smi mig -i 1 -dci -gi 5 -ci 0",
		"nvidia-smi mig -i 1 -dgi -gi 5",
	}, cli.Calls())
	require.Equal(t, "5", h.Spec().Devices[0].PartitionID)
}

func TestGoldVNPUCreatedAndDestroyed(t *testing.T) {
	skipUnlessUnix(t)
	t.Parallel()
	cli := &recorder{}
	r := newTestRunner(t, cli)
	h, err := r.Start(context.Background(), protocol.TaskSpec{TaskID: 31, QoS: "gold",
		Command: []string{"sh", "-c", "echo $ASCEND_RT_VISIBLE_DEVICES"},
		Devices: []protocol.DeviceSlice{{Vendor: "ascend", Index: 2, Card: ptr(2), Chip: ptr(0),
			Isolation: protocol.IsolationVNPU, Profile: "vir03_1c_8g"}}})
	require.NoError(t, err)
	require.Equal(t, protocol.PhaseSucceeded, h.Wait().Phase)
	require.Equal(t, "132\n", readAll(t, h, "stdout")) // 2*16+100
	require.Equal(t, []string{
		"npu-smi set -t create-vnpu -i 2 -c 0 -f vir03_1c_8g -v 132",
		"npu-smi set -t destroy-vnpu -i 2 -c 0 -v 132",
	}, cli.Calls())
}

func TestGoldVNPUIDsDoNotCollide(t *testing.T) {
	t.Parallel()
	iso := &Isolator{CLI: &recorder{}}
	d := []protocol.DeviceSlice{{Vendor: "ascend", Index: 0, Profile: "vir02"}}
	a, err := iso.Prepare(context.Background(), "gold", d)
	require.NoError(t, err)
	b, err := iso.Prepare(context.Background(), "gold", d)
	require.NoError(t, err)
	require.Equal(t, "100", a.Devices[0].PartitionID)
	require.Equal(t, "101", b.Devices[0].PartitionID)
	require.NoError(t, a.Release(context.Background()))
	c, err := iso.Prepare(context.Background(), "gold", d)
	require.NoError(t, err)
	require.Equal(t, "100", c.Devices[0].PartitionID) // freed id is reused
}

func TestGoldFailureUndoesEarlierPartitions(t *testing.T) {
	t.Parallel()
	cli := &recorder{answers: func(line string) (string, error) {
		if strings.Contains(line, "-i 1 ") && strings.Contains(line, "create-vnpu") {
			return "", errors.New("exit status 1: no resources")
		}
		return "", nil
	}}
	iso := &Isolator{CLI: cli}
	_, err := iso.Prepare(context.Background(), "gold", []protocol.DeviceSlice{
		{Vendor: "ascend", Index: 0, Profile: "vir02"}, {Vendor: "ascend", Index: 1, Profile: "vir02"}})
	require.ErrorContains(t, err, "no resources")
	require.Equal(t, []string{
		"npu-smi set -t create-vnpu -i 0 -c 0 -f vir02 -v 100",
		"npu-smi set -t create-vnpu -i 1 -c 0 -f vir02 -v 116",
		"npu-smi set -t destroy-vnpu -i 0 -c 0 -v 100",
	}, cli.Calls())
}

func TestGoldVDCU(t *testing.T) {
	t.Parallel()
	cli := &recorder{answers: func(line string) (string, error) {
		if strings.Contains(line, "-create-vdevices") {
			return "create vdevice 3 success\n", nil
		}
		if strings.Contains(line, "-show-vdevice-info") {
			return "vdevice 3: DCU 1, compute units 15, memory 8192 MiB\n", nil
		}
		return "", nil
	}}
	iso := &Isolator{CLI: cli}
	p, err := iso.Prepare(context.Background(), "gold", []protocol.DeviceSlice{
		{Vendor: "hygon", Index: 1, Isolation: protocol.IsolationVDCU, ComputeUnits: 15, MemoryMiB: 8192}})
	require.NoError(t, err)
	require.Equal(t, "3", p.Devices[0].PartitionID)
	require.NoError(t, p.Release(context.Background()))
	require.Equal(t, []string{
		"hy-smi virtual -create-vdevices 1 -d 1 -vdevice-compute-units 15 -vdevice-memory-size 8192",
		"hy-smi virtual -show-vdevice-info",
		"hy-smi virtual -destroy-vdevice 3",
	}, cli.Calls())
}

func TestGoldUnsupportedVendorAndWhole(t *testing.T) {
	t.Parallel()
	cli := &recorder{}
	iso := &Isolator{CLI: cli}
	_, err := iso.Prepare(context.Background(), "gold", []protocol.DeviceSlice{{Vendor: "kunlunxin", Index: 0, Profile: "half"}})
	require.ErrorContains(t, err, "no CLI-created hardware partition")
	p, err := iso.Prepare(context.Background(), "gold", []protocol.DeviceSlice{{Vendor: "kunlunxin", Index: 0}})
	require.NoError(t, err)
	require.Empty(t, p.Env)
	require.Empty(t, cli.Calls())
	_, err = iso.Prepare(context.Background(), "platinum", nil)
	require.ErrorContains(t, err, "unknown qos")
}

func TestParseMIGList(t *testing.T) {
	t.Parallel()
	out := []byte("GPU 0: A100 (UUID: GPU-a)\n  MIG 3g.20gb Device 0: (UUID: MIG-a0)\n  MIG 3g.20gb Device 1: (UUID: MIG-a1)\nGPU 1: A100 (UUID: GPU-b)\n  MIG 7g.40gb Device 0: (UUID: MIG-b0)\n")
	require.Equal(t, []string{"MIG-a0", "MIG-a1"}, parseMIGList(out, 0))
	require.Equal(t, []string{"MIG-b0"}, parseMIGList(out, 1))
	require.Empty(t, parseMIGList(out, 2))
}
