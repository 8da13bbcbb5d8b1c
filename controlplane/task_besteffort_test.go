package controlplane

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAllowBestEffortValidation: best effort is a Silver option for tasks
// with devices; anything else is refused with the field named.
func TestAllowBestEffortValidation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		qos     QoS
		devices int
		ok      bool
	}{
		{"silver with devices", QoSSilver, 1, true},
		{"gold", QoSGold, 1, false},
		{"bronze", QoSBronze, 1, false},
		{"default qos is bronze", "", 1, false},
		{"cpu only", QoSSilver, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := TaskSpec{Name: "t", Command: []string{"x"}, DeviceCount: tc.devices, QoS: tc.qos, AllowBestEffort: true}
			err := s.Validate()
			if tc.ok {
				require.NoError(t, err)
				return
			}
			require.True(t, errors.Is(err, ErrInvalid), "%v", err)
			require.ErrorContains(t, err, "allow_best_effort")
		})
	}
}
