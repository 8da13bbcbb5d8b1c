package storetest

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func testLifecycle(t *testing.T, open Opener) {
	s := open(t)
	require.NoError(t, s.Ping(ctx(t)))
	n, err := s.CountUsers(ctx(t))
	require.NoError(t, err)
	require.Zero(t, n, "a fresh store is empty")
	// Close is idempotent: the opener's cleanup closes again.
	require.NoError(t, s.Close())
	require.NoError(t, s.Close())
	require.Error(t, s.Ping(ctx(t)), "a closed store is not reachable")
}
