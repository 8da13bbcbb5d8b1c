package controlplane

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTaskSpecValidateDefaults(t *testing.T) {
	// Devices without a compute share are whole devices; QoS defaults to bronze.
	s := TaskSpec{Name: "t", Command: []string{"true"}, DeviceCount: 2}
	require.NoError(t, s.Validate())
	require.Equal(t, 100, s.ComputePercent)
	require.Equal(t, QoSBronze, s.QoS)

	bad := TaskSpec{Name: "t", Command: []string{"true"}, DeviceCount: 1, ComputePercent: 5}
	require.True(t, errors.Is(bad.Validate(), ErrInvalid))
	cpuOnly := TaskSpec{Name: "t", Command: []string{"true"}, MemoryMiB: 10}
	require.ErrorContains(t, cpuOnly.Validate(), "device_count")
}

// TestVendorValidated: tasks and quotas name a known vendor or none; a typo
// is a 400, not a task pending forever or a quota matching nothing.
func TestVendorValidated(t *testing.T) {
	ok := TaskSpec{Name: "t", Command: []string{"true"}, DeviceCount: 1, Vendor: "ascend"}
	require.NoError(t, ok.Validate())
	typo := TaskSpec{Name: "t", Command: []string{"true"}, DeviceCount: 1, Vendor: "nvidai"}
	err := typo.Validate()
	require.True(t, errors.Is(err, ErrInvalid))
	require.ErrorContains(t, err, `not "nvidai"`)
	require.NoError(t, (&Quota{Tenant: "a", Vendor: "nvidia"}).Validate())
	require.NoError(t, (&Quota{Tenant: "a"}).Validate())
	require.True(t, errors.Is((&Quota{Tenant: "a", Vendor: "NVIDIA"}).Validate(), ErrInvalid))
}

func TestTransitionTable(t *testing.T) {
	require.True(t, CanTransition(TaskQueued, TaskScheduled))
	require.True(t, CanTransition(TaskFailed, TaskQueued)) // retry
	require.False(t, CanTransition(TaskSucceeded, TaskQueued))
	require.False(t, CanTransition(TaskCancelled, TaskRunning))
	require.Error(t, Transition{From: TaskSucceeded, To: TaskRunning}.Check())
}
