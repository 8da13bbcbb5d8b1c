package metricstore_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane/metricstore"
	"github.com/heteroflow/heteroflow/controlplane/metricstore/forward"
	"github.com/heteroflow/heteroflow/controlplane/metricstore/query/querytest"
)

// TestRemoteConsumerSuite runs the same consumer suite as the embedded
// store against a real Prometheus and a real VictoriaMetrics, with the
// fixture delivered by the remote-mode forwarder.
func TestRemoteConsumerSuite(t *testing.T) {
	stores := []struct {
		name  string
		start func(testing.TB) string
	}{
		{"prometheus", func(tb testing.TB) string { return startPrometheus(tb, "global: {}\n") }},
		{"victoriametrics", startVictoria},
	}
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			addr := st.start(t)
			cfg := metricstore.Defaults()
			cfg.Mode = metricstore.ModeRemote
			cfg.Remote.QueryURL = url(addr, "")
			cfg.Remote.WriteURL = url(addr, "/api/v1/write")
			s, err := metricstore.Open(cfg, metricstore.Options{Logger: quiet})
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, s.Close()) })

			fw, err := forward.New(forward.Config{URL: cfg.Remote.WriteURL}, nil)
			require.NoError(t, err)
			end := time.Now().Add(-time.Minute).Truncate(time.Second)
			querytest.Load(t, fw, end)
			querytest.WaitVisible(t, s.Querier(), end)
			querytest.Run(t, s.Querier(), end)
		})
	}
}
