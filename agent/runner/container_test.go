package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/agent/agenttest"
	"github.com/heteroflow/heteroflow/agent/protocol"
)

func TestContainerArgv(t *testing.T) {
	t.Parallel()
	spec := protocol.TaskSpec{TaskID: 7, Attempt: 1, Image: "pytorch:2", Command: []string{"python"}, Args: []string{"train.py"}}
	opts := ContainerOptions{EnvFile: "/s/tasks/7-1/container.env", WorkDir: "/s/work/7-1",
		Identity: Identity{Name: "nobody", UID: 65534, GID: 65534, Groups: []uint32{44}, Switch: true}}
	sandbox := []string{"--user", "65534:65534", "--group-add", "44", "-v", "/s/work/7-1:/s/work/7-1", "-w", "/s/work/7-1"}
	cases := []struct {
		name    string
		engine  string
		devices []protocol.DeviceSlice
		want    []string
	}{
		{"docker nvidia", "docker", []protocol.DeviceSlice{{Vendor: "nvidia", UUID: "GPU-a"}, {Vendor: "nvidia", UUID: "GPU-b", PartitionUUID: "MIG-c"}},
			[]string{"--gpus", `"device=GPU-a,MIG-c"`}},
		{"nerdctl nvidia", "nerdctl", []protocol.DeviceSlice{{Vendor: "nvidia", UUID: "GPU-a"}},
			[]string{"--gpus", `"device=GPU-a"`}},
		{"podman nvidia CDI", "podman", []protocol.DeviceSlice{{Vendor: "nvidia", UUID: "GPU-a"}},
			[]string{"--device", "nvidia.com/gpu=GPU-a"}},
		{"ascend", "docker", []protocol.DeviceSlice{{Vendor: "ascend", Index: 4, Card: ptr(2)}},
			[]string{"--device", "/dev/davinci2", "--device", "/dev/davinci_manager", "--device", "/dev/devmm_svm",
				"--device", "/dev/hisi_hdc", "-v", "/usr/local/Ascend/driver:/usr/local/Ascend/driver:ro"}},
		{"amd", "docker", []protocol.DeviceSlice{{Vendor: "amd", Index: 1}},
			[]string{"--device", "/dev/dri", "--device", "/dev/kfd", "--group-add", "video"}},
		{"biren nodes only", "docker", []protocol.DeviceSlice{{Vendor: "biren", Index: 3}},
			[]string{"--device", "/dev/biren/card_3"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			argv := ContainerArgv(tc.engine, spec, tc.devices, opts)
			head := []string{tc.engine, "run", "--rm", "--init", "--name", "heteroflow-task-7-1",
				"--label", "heteroflow.task=7", "--label", "heteroflow.attempt=1", "--security-opt", "no-new-privileges"}
			require.Equal(t, head, argv[:len(head)])
			require.Equal(t, []string{"--env-file", opts.EnvFile, "pytorch:2", "python", "train.py"}, argv[len(argv)-5:])
			middle := argv[len(head) : len(argv)-5]
			require.Equal(t, append(append([]string{}, sandbox...), tc.want...), middle)
		})
	}
	// Root allowed by the node, or no switch: the image's own user.
	argv := ContainerArgv("docker", spec, nil, ContainerOptions{Identity: Identity{Name: "root", Switch: true}})
	require.NotContains(t, argv, "--user")
}

// fakeEngine puts an executable named engine first on PATH that records its
// command line and the env file it was given, then prints "container ran".
func fakeEngine(t *testing.T, engine string) (record string) {
	dir := t.TempDir()
	record = filepath.Join(dir, "argv")
	script := `#!/bin/sh
: > "` + record + `"
for a in "$@"; do printf '%s\n' "$a" >> "` + record + `"; done
prev=""
for a in "$@"; do
  if [ "$prev" = "--env-file" ]; then cp "$a" "` + record + `.env"; fi
  prev="$a"
done
env > "` + record + `.clientenv"
echo container ran
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, engine), []byte(script), 0o755))
	t.Setenv("PATH", dir+":"+os.Getenv("PATH"))
	return record
}

func TestContainerTaskThroughFakeEngine(t *testing.T) {
	skipUnlessUnix(t)
	for _, engine := range Engines {
		t.Run(engine, func(t *testing.T) {
			record := fakeEngine(t, engine)
			t.Setenv("HETEROFLOW_AGENT_SECRET", "agent-only")
			t.Setenv("DOCKER_HOST", "unix:///run/test.sock")
			r := New(Config{LogDir: filepath.Join(agenttest.DataDir(t), "tasks"), Engine: engine, CLI: &recorder{}, Logger: quietLogger})
			h, err := r.Start(context.Background(), protocol.TaskSpec{TaskID: 31, Attempt: 2, Image: "busybox:1",
				Command: []string{"sh", "-c", "env"}, Env: map[string]string{"LD_PRELOAD": "/tmp/evil.so", "A": "1"},
				SecretEnv: map[string]string{"TOKEN": "s3cr3t"},
				Devices:   []protocol.DeviceSlice{{Vendor: "nvidia", Index: 0, UUID: "GPU-z"}}})
			require.NoError(t, err)
			res := h.Wait()
			require.Equal(t, protocol.PhaseSucceeded, res.Phase, res.Reason)
			require.Equal(t, "container ran\n", readAll(t, h, "stdout"))
			raw, err := os.ReadFile(record)
			require.NoError(t, err)
			argv := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
			require.Equal(t, []string{"run", "--rm", "--init", "--name", "heteroflow-task-31-2"}, argv[:5])
			require.Equal(t, []string{"busybox:1", "sh", "-c", "env"}, argv[len(argv)-4:])
			require.NotContains(t, string(raw), "s3cr3t", "secrets never on the command line")
			if os.Geteuid() == 0 {
				require.Contains(t, string(raw), "--user\n65534:")
			}
			envFile, err := os.ReadFile(record + ".env")
			require.NoError(t, err)
			require.Contains(t, string(envFile), "TOKEN=s3cr3t\n")
			require.Contains(t, string(envFile), "A=1\n")
			require.Contains(t, string(envFile), "HETEROFLOW_TASK_ID=31\n")
			require.Contains(t, string(envFile), "NVIDIA_VISIBLE_DEVICES=GPU-z\n")
			require.NotContains(t, string(envFile), "agent-only")
			require.NotContains(t, string(envFile), "PATH=", "the image keeps its own PATH")
			// The engine client itself gets only what it needs to reach its
			// daemon: not the agent's secrets, not the task's variables.
			clientEnv, err := os.ReadFile(record + ".clientenv")
			require.NoError(t, err)
			require.Contains(t, string(clientEnv), "DOCKER_HOST=unix:///run/test.sock")
			require.NotContains(t, string(clientEnv), "agent-only")
			require.NotContains(t, string(clientEnv), "LD_PRELOAD")
			require.NotContains(t, string(clientEnv), "s3cr3t")
			// The env file is removed with the task.
			_, err = os.Stat(filepath.Join(h.LogDir(), "container.env"))
			require.ErrorIs(t, err, os.ErrNotExist)
		})
	}
}

func TestContainerEnvRefusesNewlines(t *testing.T) {
	_, err := writeEnvFile(t.TempDir(), map[string]string{"A": "x\ny"})
	require.ErrorContains(t, err, "env A")
}
