package runner

import (
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/agent/protocol"
)

func skipUnlessUnix(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("process-group tests need a Unix shell")
	}
}

func TestRunEnvPerVendor(t *testing.T) {
	skipUnlessUnix(t)
	t.Parallel()
	cases := []struct {
		name    string
		devices []protocol.DeviceSlice
		vars    string // shell expression echoed by the task
		want    string
	}{
		{"nvidia uuids", []protocol.DeviceSlice{
			{Vendor: "nvidia", Index: 3, UUID: "GPU-aaa"}, {Vendor: "nvidia", Index: 5, UUID: "GPU-bbb"}},
			"$CUDA_VISIBLE_DEVICES", "GPU-aaa,GPU-bbb"},
		{"nvidia mig slice", []protocol.DeviceSlice{
			{Vendor: "nvidia", Index: 0, UUID: "GPU-aaa", PartitionUUID: "MIG-123"}},
			"$CUDA_VISIBLE_DEVICES", "MIG-123"},
		{"ascend logical chip ids", []protocol.DeviceSlice{
			{Vendor: "ascend", Index: 6, Card: ptr(3)}, {Vendor: "ascend", Index: 7, Card: ptr(3)}},
			"$ASCEND_RT_VISIBLE_DEVICES", "6,7"},
		{"cambricon", []protocol.DeviceSlice{{Vendor: "cambricon", Index: 1}}, "$MLU_VISIBLE_DEVICES", "1"},
		{"amd only HIP", []protocol.DeviceSlice{{Vendor: "amd", Index: 2}},
			"$HIP_VISIBLE_DEVICES|${ROCR_VISIBLE_DEVICES-unset}", "2|unset"},
		{"hygon", []protocol.DeviceSlice{{Vendor: "hygon", Index: 4}}, "$HIP_VISIBLE_DEVICES", "4"},
		{"kunlunxin", []protocol.DeviceSlice{{Vendor: "kunlunxin", Index: 0}}, "$XPU_VISIBLE_DEVICES", "0"},
		{"mthreads", []protocol.DeviceSlice{{Vendor: "mthreads", Index: 1}}, "$MUSA_VISIBLE_DEVICES", "1"},
		{"iluvatar", []protocol.DeviceSlice{{Vendor: "iluvatar", Index: 2}}, "$CUDA_VISIBLE_DEVICES", "2"},
		{"metax", []protocol.DeviceSlice{{Vendor: "metax", Index: 0}}, "$CUDA_VISIBLE_DEVICES", "0"},
		{"enflame", []protocol.DeviceSlice{{Vendor: "enflame", Index: 3}}, "$TOPS_VISIBLE_DEVICES", "3"},
		{"mixed nvidia+ascend", []protocol.DeviceSlice{
			{Vendor: "nvidia", Index: 0, UUID: "GPU-x"}, {Vendor: "ascend", Index: 1}},
			"$CUDA_VISIBLE_DEVICES/$ASCEND_RT_VISIBLE_DEVICES", "GPU-x/1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newTestRunner(t, &recorder{})
			h, err := r.Start(context.Background(), protocol.TaskSpec{TaskID: 1,
				Command: []string{"sh", "-c", `echo "` + tc.vars + `|$HETEROFLOW_TASK_ID"`},
				// the user cannot widen visibility through the task env
				Env:     map[string]string{"CUDA_VISIBLE_DEVICES": "all", "MY_VAR": "x"},
				Devices: tc.devices})
			require.NoError(t, err)
			res := h.Wait()
			require.Equal(t, protocol.PhaseSucceeded, res.Phase, res.Reason)
			require.Equal(t, 0, *res.ExitCode)
			require.Equal(t, tc.want+"|1\n", readAll(t, h, "stdout"))
			require.Contains(t, h.Env, "MY_VAR=x")
		})
	}
}

func TestVisibilityErrors(t *testing.T) {
	t.Parallel()
	_, err := VisibilityEnv([]protocol.DeviceSlice{{Vendor: "biren", Index: 0}}, false)
	require.ErrorContains(t, err, "run the task with an image")
	_, err = VisibilityEnv([]protocol.DeviceSlice{{Vendor: "nvidia", Index: 0}, {Vendor: "metax", Index: 0}}, false)
	require.ErrorContains(t, err, "cannot use both")
	_, err = VisibilityEnv([]protocol.DeviceSlice{{Vendor: "acme", Index: 0}}, false)
	require.ErrorContains(t, err, "unknown vendor")
	env, err := VisibilityEnv([]protocol.DeviceSlice{{Vendor: "ascend", Index: 5}}, true)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"ASCEND_VISIBLE_DEVICES": "5"}, env)
}

func TestExitCodeAndStderr(t *testing.T) {
	skipUnlessUnix(t)
	t.Parallel()
	r := newTestRunner(t, &recorder{})
	h, err := r.Start(context.Background(), protocol.TaskSpec{TaskID: 2,
		Command: []string{"sh", "-c", "echo oops >&2; exit 7"}})
	require.NoError(t, err)
	res := h.Wait()
	require.Equal(t, protocol.PhaseFailed, res.Phase)
	require.Equal(t, 7, *res.ExitCode)
	require.Equal(t, "oops\n", readAll(t, h, "stderr"))
}

func TestStartErrors(t *testing.T) {
	t.Parallel()
	r := newTestRunner(t, &recorder{})
	_, err := r.Start(context.Background(), protocol.TaskSpec{TaskID: 3})
	require.ErrorContains(t, err, "neither command nor image")
	_, err = r.Start(context.Background(), protocol.TaskSpec{TaskID: 3, Image: "busybox"})
	require.ErrorContains(t, err, "neither docker nor podman")
	_, err = r.Start(context.Background(), protocol.TaskSpec{TaskID: 3, Command: []string{"/nonexistent/bin"}})
	require.Error(t, err)
	_, err = r.Start(context.Background(), protocol.TaskSpec{TaskID: 3, Command: []string{"true"}, QoS: "silver",
		Devices: []protocol.DeviceSlice{{Vendor: "ascend", Index: 0, MemoryMiB: 1024}}})
	require.ErrorContains(t, err, "no driver-level limits")
	require.False(t, strings.Contains(err.Error(), "panic"))
}
