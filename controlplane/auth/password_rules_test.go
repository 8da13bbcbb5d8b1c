package auth

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Every broken rule is named at once, not one per attempt.
func TestPasswordPolicyNamesEveryBrokenRule(t *testing.T) {
	err := DefaultPolicy.Check("alice", "alice")
	require.Error(t, err)
	for _, want := range []string{"at least 10 characters", "mix at least 3 of", "must not contain the username"} {
		require.ErrorContains(t, err, want)
	}
	require.NoError(t, DefaultPolicy.Check("Correct-Horse-9", "alice"))
}
