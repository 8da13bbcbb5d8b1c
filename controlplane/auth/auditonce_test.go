package auth

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Successes are audited once per subject and period; other subjects and a
// new period are audited again.
func TestSuccessAuditedOncePerPeriod(t *testing.T) {
	var o auditOnce
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	require.True(t, o.due("apikey:abc", t0))
	for i := 1; i < 360; i++ { // a heartbeat every 10 s for an hour
		require.False(t, o.due("apikey:abc", t0.Add(time.Duration(i)*10*time.Second)))
	}
	require.True(t, o.due("apikey:def", t0.Add(time.Minute)))
	require.True(t, o.due("apikey:abc", t0.Add(SuccessAuditPeriod)))
}
