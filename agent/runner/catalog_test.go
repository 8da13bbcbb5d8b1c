package runner

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/agent/protocol"
	"github.com/heteroflow/heteroflow/receivers/vendorcatalog"
)

// TestEveryCatalogVendorIsSelectable: the runner selects every catalog
// vendor's devices from the catalog alone — the process variable on the
// host, the runtime variable or /dev nodes in a container — and uses the id
// the vendor CLI printed (here 3, not a position from 0).
func TestEveryCatalogVendorIsSelectable(t *testing.T) {
	t.Parallel()
	for _, e := range vendorcatalog.Catalog() {
		t.Run(e.ID, func(t *testing.T) {
			t.Parallel()
			d := []protocol.DeviceSlice{{Vendor: e.ID, Index: 3}}
			env, err := VisibilityEnv(d, false)
			if len(e.ProcessVars) == 0 {
				require.Error(t, err)
			} else {
				require.NoError(t, err)
				require.Equal(t, map[string]string{e.ProcessVars[0]: "3"}, env)
			}
			cenv, err := VisibilityEnv(d, true)
			require.NoError(t, err)
			if e.ContainerVar != "" {
				require.Equal(t, map[string]string{e.ContainerVar: "3"}, cenv)
			} else {
				require.Empty(t, cenv)
			}
			nodes := DeviceNodes(d)
			for _, n := range e.ControlNodes {
				require.Contains(t, nodes, n)
			}
			if e.DeviceNode != "" {
				require.Contains(t, nodes, deviceNode(e.DeviceNode, d[0]))
				require.NotContains(t, deviceNode(e.DeviceNode, d[0]), "{")
			}
			if !e.Container.GPUFlag && e.ContainerVar == "" && e.DeviceNode == "" {
				t.Fatalf("%s: a container could not select its devices", e.ID)
			}
		})
	}
}

func TestContainerArgvFollowsCatalogHints(t *testing.T) {
	t.Parallel()
	card := 6
	argv := ContainerArgv("docker", protocol.TaskSpec{TaskID: 1, Image: "img"}, []protocol.DeviceSlice{
		{Vendor: "nvidia", Index: 1, UUID: "GPU-a"}, {Vendor: "ascend", Index: 2, Card: &card}, {Vendor: "amd", Index: 0},
	}, ContainerOptions{})
	require.Contains(t, argv, `"device=GPU-a"`)
	require.Contains(t, argv, "/dev/davinci6")
	require.Contains(t, argv, "/usr/local/Ascend/driver:/usr/local/Ascend/driver:ro")
	require.Contains(t, argv, "video")
	require.NotContains(t, argv, "/dev/nvidiactl", "NVIDIA nodes come from the engine's GPU support")
	pod := ContainerArgv("podman", protocol.TaskSpec{TaskID: 1, Image: "img"}, []protocol.DeviceSlice{
		{Vendor: "nvidia", Index: 1, UUID: "GPU-a"}}, ContainerOptions{})
	require.Contains(t, pod, "nvidia.com/gpu=GPU-a")
}
