package runner

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/agent/protocol"
)

// TestVNPUReadBack: the vNPU id npu-smi reports is checked against the one
// asked for; a different one is destroyed and the task refused.
func TestVNPUReadBack(t *testing.T) {
	t.Parallel()
	rec := &recorder{answers: func(line string) (string, error) {
		if strings.Contains(line, "create-vnpu") {
			return "       Status : OK\n       Message : Create vnpu success\n       vNPU ID : 105\n", nil
		}
		return "", nil
	}}
	iso := &Isolator{CLI: rec, Logger: quietLogger}
	_, err := iso.Prepare(context.Background(), "gold", []protocol.DeviceSlice{{Vendor: "ascend", Index: 0, Profile: "vir05_1c_16g"}})
	require.ErrorContains(t, err, "asked for id 100, npu-smi created 105")
	require.Equal(t, []string{
		"npu-smi set -t create-vnpu -i 0 -c 0 -f vir05_1c_16g -v 100",
		"npu-smi set -t destroy-vnpu -i 0 -c 0 -v 105",
	}, rec.Calls())

	ok := &recorder{answers: func(string) (string, error) { return "       vNPU ID : 100\n", nil }}
	p, err := (&Isolator{CLI: ok, Logger: quietLogger}).Prepare(context.Background(), "gold",
		[]protocol.DeviceSlice{{Vendor: "ascend", Index: 0, Profile: "vir05_1c_16g"}})
	require.NoError(t, err)
	require.Equal(t, "100", p.Devices[0].PartitionID)
	require.NoError(t, p.Release(context.Background()))
	require.Equal(t, "npu-smi set -t destroy-vnpu -i 0 -c 0 -v 100", ok.Calls()[1])
}
