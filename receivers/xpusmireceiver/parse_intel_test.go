package xpusmireceiver

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Intel's xpu-smi shares the name; its output must be refused, not parsed.
func TestRefusesIntelXPUSMI(t *testing.T) {
	t.Parallel()
	for name, in := range map[string]string{
		"discovery-json": `{"device_list": [{"device_id": 0, "device_name": "Intel(R) Data Center GPU Max 1550", "vendor_name": "Intel(R) Corporation"}]}`,
		"discovery-table": "+-----------+--------------------------------------------------------------------------------------+\n" +
			"| Device ID | Device Information                                                                   |\n" +
			"| 0         | Device Name: Intel(R) Data Center GPU Flex 170                                       |\n" +
			"|           | Vendor Name: Intel(R) Corporation                                                    |\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Parse([]byte(in))
			require.ErrorIs(t, err, ErrIntelXPUSMI)
			for _, f := range Forms {
				_, err := ParseForm(f, []byte(in))
				require.ErrorIs(t, err, ErrIntelXPUSMI)
			}
		})
	}
}
