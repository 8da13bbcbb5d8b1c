package storetest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
)

func testSettings(t *testing.T, open Opener) {
	s := open(t)
	_, err := s.GetSetting(ctx(t), "registration")
	require.ErrorIs(t, err, controlplane.ErrNotFound)
	require.NoError(t, s.PutSetting(ctx(t), "registration", "closed"))
	v, err := s.GetSetting(ctx(t), "registration")
	require.NoError(t, err)
	require.Equal(t, "closed", v)
	require.NoError(t, s.PutSetting(ctx(t), "registration", "open"), "put overwrites")
	v, err = s.GetSetting(ctx(t), "registration")
	require.NoError(t, err)
	require.Equal(t, "open", v)
	require.NoError(t, s.PutSetting(ctx(t), "empty", ""))
	v, err = s.GetSetting(ctx(t), "empty")
	require.NoError(t, err)
	require.Empty(t, v, "an empty value is a value")
	require.ErrorIs(t, s.PutSetting(ctx(t), " ", "x"), controlplane.ErrInvalid)
	require.NoError(t, s.DeleteSetting(ctx(t), "registration"))
	_, err = s.GetSetting(ctx(t), "registration")
	require.ErrorIs(t, err, controlplane.ErrNotFound)
	require.NoError(t, s.DeleteSetting(ctx(t), "registration"), "deleting a missing key is fine")
}
