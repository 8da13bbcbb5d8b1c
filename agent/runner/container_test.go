package runner

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/agent/protocol"
)

func TestContainerArgv(t *testing.T) {
	t.Parallel()
	spec := protocol.TaskSpec{TaskID: 7, Attempt: 1, Image: "pytorch:2", Command: []string{"python"}, Args: []string{"train.py"}}
	cases := []struct {
		name    string
		engine  string
		devices []protocol.DeviceSlice
		want    []string
	}{
		{"docker nvidia", "docker", []protocol.DeviceSlice{{Vendor: "nvidia", UUID: "GPU-a"}, {Vendor: "nvidia", UUID: "GPU-b", PartitionUUID: "MIG-c"}},
			[]string{"--gpus", `"device=GPU-a,MIG-c"`, "-e", "A=1", "-e", "NVIDIA_VISIBLE_DEVICES=GPU-a,MIG-c"}},
		{"podman nvidia CDI", "podman", []protocol.DeviceSlice{{Vendor: "nvidia", UUID: "GPU-a"}},
			[]string{"--device", "nvidia.com/gpu=GPU-a"}},
		{"ascend", "docker", []protocol.DeviceSlice{{Vendor: "ascend", Index: 4, Card: ptr(2)}},
			[]string{"--device", "/dev/davinci2", "--device", "/dev/davinci_manager", "--device", "/dev/devmm_svm",
				"--device", "/dev/hisi_hdc", "-v", "/usr/local/Ascend/driver:/usr/local/Ascend/driver:ro",
				"-e", "A=1", "-e", "ASCEND_VISIBLE_DEVICES=4"}},
		{"amd", "docker", []protocol.DeviceSlice{{Vendor: "amd", Index: 1}},
			[]string{"--device", "/dev/dri", "--device", "/dev/kfd", "--group-add", "video", "-e", "A=1", "-e", "AMD_VISIBLE_DEVICES=1"}},
		{"biren nodes only", "docker", []protocol.DeviceSlice{{Vendor: "biren", Index: 3}},
			[]string{"--device", "/dev/biren/card_3", "-e", "A=1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env, err := VisibilityEnv(tc.devices, true)
			require.NoError(t, err)
			env["A"] = "1"
			argv := ContainerArgv(tc.engine, spec, tc.devices, env)
			head := []string{tc.engine, "run", "--rm", "--init", "--name", "heteroflow-task-7-1",
				"--label", "heteroflow.task=7", "--label", "heteroflow.attempt=1"}
			require.Equal(t, head, argv[:len(head)])
			require.Equal(t, []string{"pytorch:2", "python", "train.py"}, argv[len(argv)-3:])
			middle := argv[len(head) : len(argv)-3]
			if tc.engine == "podman" {
				require.Equal(t, tc.want, middle[:len(tc.want)])
				return
			}
			require.Equal(t, tc.want, middle)
		})
	}
}
