package controlplane

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTerminalTaskStatesAreTheTerminalOnes(t *testing.T) {
	for _, s := range AllTaskStates {
		require.Equal(t, s.Terminal(), slices.Contains(TerminalTaskStates, s), s)
	}
}
