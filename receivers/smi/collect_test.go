package smi

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// cannedRunner answers "tool args…" from a map; unknown tools are missing.
func cannedRunner(t *testing.T, outputs map[string]string, failing map[string]error) (Runner, *[]string) {
	var calls []string
	return func(_ context.Context, name string, args ...string) ([]byte, error) {
		key := strings.TrimSpace(name + " " + strings.Join(args, " "))
		calls = append(calls, key)
		if err, ok := failing[key]; ok {
			return nil, err
		}
		out, ok := outputs[key]
		if !ok {
			return nil, fmt.Errorf("%w: %s", ErrToolNotFound, name)
		}
		return []byte(out), nil
	}, &calls
}

func fixture(t *testing.T, pkg, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", pkg, "testdata", name))
	require.NoError(t, err)
	return string(b)
}

func TestCollectNVIDIAMergesTopology(t *testing.T) {
	t.Parallel()
	xml := fixture(t, "nvidiasmireceiver", "xml-550-h100-mig.txt")
	topo := "\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\nGPU0\t X \tNV18\t0-31\t0\nGPU1\tNV18\t X \t32-63\t1\n"
	run, calls := cannedRunner(t, map[string]string{"nvidia-smi -q -x": xml, "nvidia-smi topo -m": topo}, nil)
	snap, err := Collect(context.Background(), "nvidia", run)
	require.NoError(t, err)
	require.Equal(t, []string{"nvidia-smi -q -x", "nvidia-smi topo -m"}, *calls)
	require.Len(t, snap.Devices, 2)
	require.Equal(t, 1, *snap.Devices[1].NUMANode)
	require.Equal(t, 18, snap.Devices[0].Links[0].Lanes)
	require.Equal(t, "mig", snap.Devices[0].Isolation.Hardware, "H100 offers MIG profiles")
	require.NotEmpty(t, snap.Devices[0].Isolation.Profiles)
}

func TestCollectSecondaryFailureIsWarning(t *testing.T) {
	t.Parallel()
	xml := fixture(t, "nvidiasmireceiver", "xml-550-h100-mig.txt")
	run, _ := cannedRunner(t, map[string]string{"nvidia-smi -q -x": xml},
		map[string]error{"nvidia-smi topo -m": errors.New("exit status 2")})
	snap, err := Collect(context.Background(), "nvidia", run)
	require.NoError(t, err)
	require.Len(t, snap.Warnings, 1)
	require.Contains(t, snap.Warnings[0], "topo -m")
}

func TestCollectAscendLogicalIDs(t *testing.T) {
	t.Parallel()
	info := fixture(t, "npusmireceiver", "info-21.0-310-multichip.txt")
	m := fixture(t, "npusmireceiver", "map-310-mcu.txt")
	run, _ := cannedRunner(t, map[string]string{"npu-smi info": info, "npu-smi info -m": m}, nil)
	snap, err := Collect(context.Background(), "ascend", run)
	require.NoError(t, err)
	require.Equal(t, 4, snap.Devices[0].Index)
	require.Equal(t, 5, snap.Devices[1].Index)
}

func TestCollectErrors(t *testing.T) {
	t.Parallel()
	intel := `{"device_list": [{"vendor_name": "Intel(R) Corporation"}]}`
	cases := []struct {
		name, vendor string
		outputs      map[string]string
		failing      map[string]error
		want         error
	}{
		{"no tool", "cambricon", nil, nil, ErrToolNotFound},
		{"driver not loaded", "nvidia", nil, map[string]error{"nvidia-smi -q -x": errors.New("exit status 9: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver")}, ErrDriverNotLoaded},
		{"intel xpu-smi", "kunlunxin", map[string]string{"xpu-smi -m": intel}, nil, ErrToolNotFound},
		{"hygon rocm-smi on amd lookup", "amd", map[string]string{"rocm-smi " + strings.Join(specs["amd"]().Tools[0].Commands[0].Args, " "): fixture(t, "hysmireceiver", "json-k100-2dcu.txt")}, nil, ErrToolNotFound},
		{"unknown vendor", "voodoo", nil, nil, ErrUnknownVendor},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			run, _ := cannedRunner(t, c.outputs, c.failing)
			_, err := Collect(context.Background(), c.vendor, run)
			require.ErrorIs(t, err, c.want)
		})
	}
}

func TestCollectFallsBackToSecondToolName(t *testing.T) {
	t.Parallel()
	table := fixture(t, "xpusmireceiver", "table-r200-1dev.txt")
	run, calls := cannedRunner(t, map[string]string{"xpu_smi": table}, nil)
	snap, err := Collect(context.Background(), "kunlunxin", run)
	require.NoError(t, err)
	require.Equal(t, []string{"xpu-smi -m", "xpu_smi"}, *calls)
	require.Len(t, snap.Devices, 1)
}

func TestParseUnknownForm(t *testing.T) {
	t.Parallel()
	_, err := Parse("nvidia", "yaml", []byte("x"))
	require.ErrorIs(t, err, ErrUnknownForm)
}
