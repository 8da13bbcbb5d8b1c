package vendorcatalog

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCatalogEntriesAreComplete(t *testing.T) {
	t.Parallel()
	seenVar := map[string]string{}
	seenTool := map[string]string{}
	for _, e := range Catalog() {
		require.NotEmpty(t, e.ID)
		require.NotEmpty(t, e.Name, e.ID)
		require.NotEmpty(t, e.CLIs, e.ID)
		for _, c := range e.CLIs {
			require.NotEmpty(t, c.Forms, "%s %s", e.ID, c.Name)
			require.Empty(t, seenTool[c.Name], "CLI %s claimed by two vendors", c.Name)
			seenTool[c.Name] = e.ID
			require.Equal(t, e.ID, ToolVendor(c.Name))
			for _, p := range c.Paths {
				require.True(t, filepath.IsAbs(p), p)
				require.Equal(t, c.Name, filepath.Base(p))
				require.Equal(t, e.ID, ToolVendor(p))
			}
		}
		require.Contains(t, []IDKind{IDUUID, IDPartitionOrIndex, IDIndex}, e.DeviceID, e.ID)
		for _, g := range e.NodeGlobs {
			_, err := filepath.Match(g, "/dev/x")
			require.NoError(t, err, g)
		}
		if e.ContainerVar != "" {
			require.Empty(t, seenVar[e.ContainerVar], "%s shared by two vendors", e.ContainerVar)
			seenVar[e.ContainerVar] = e.ID
		}
		for _, d := range e.DriverLimits {
			require.Contains(t, []string{DriverMPS, DriverHAMiCore, DriverEnvLimits}, d)
		}
		if len(e.Models) > 0 {
			require.NotEmpty(t, e.Hardware, "%s has partition shapes but no hardware kind", e.ID)
		}
		got, ok := Lookup(" " + e.ID + " ")
		require.True(t, ok)
		require.Equal(t, e.ID, got.ID)
	}
	_, ok := Lookup("acme")
	require.False(t, ok)
	require.Empty(t, ToolVendor("acme-smi"))
	require.Equal(t, Isolation{}, IsolationFor("acme", "X1"))
}

func TestVisibleVar(t *testing.T) {
	t.Parallel()
	nv, _ := Lookup(NVIDIA)
	require.Equal(t, "CUDA_VISIBLE_DEVICES", nv.VisibleVar(false))
	require.Equal(t, "NVIDIA_VISIBLE_DEVICES", nv.VisibleVar(true))
	br, _ := Lookup(Biren)
	require.Empty(t, br.VisibleVar(false))
	require.True(t, nv.Offers(DriverMPS))
	require.True(t, nv.Offers(DriverHAMiCore))
	as, _ := Lookup(Ascend)
	require.False(t, as.Offers(DriverHAMiCore))
}

func TestPresentNodes(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "dev", "dri"), 0o755))
	for _, n := range []string{"nvidia0", "nvidia3", "nvidiactl", "davinci1", "davinci_manager", "dri/renderD128", "kfd"} {
		require.NoError(t, os.WriteFile(filepath.Join(root, "dev", n), nil, 0o600))
	}
	nv, _ := Lookup(NVIDIA)
	require.Equal(t, []string{filepath.Join(root, "dev/nvidia0"), filepath.Join(root, "dev/nvidia3")}, nv.PresentNodes(root))
	as, _ := Lookup(Ascend)
	require.Equal(t, []string{filepath.Join(root, "dev/davinci1")}, as.PresentNodes(root))
	amd, _ := Lookup(AMD)
	require.Len(t, amd.PresentNodes(root), 1)
	cn, _ := Lookup(Cambricon)
	require.Empty(t, cn.PresentNodes(root))
}
