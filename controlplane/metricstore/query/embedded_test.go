package query_test

import (
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/tsdb"
	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane/metricstore/query"
	"github.com/heteroflow/heteroflow/controlplane/metricstore/query/querytest"
)

func TestEmbeddedConsumerSuite(t *testing.T) {
	t.Parallel()
	db, err := tsdb.Open(t.TempDir(), nil, nil, tsdb.DefaultOptions(), nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	engine := promql.NewEngine(promql.EngineOpts{MaxSamples: 1e7, Timeout: time.Minute, LookbackDelta: 5 * time.Minute})

	end := time.Now().Truncate(time.Second)
	querytest.Load(t, db, end)
	q := query.NewEmbedded(engine, db)
	querytest.WaitVisible(t, q, end)
	querytest.Run(t, q, end)
}

func TestEmbeddedLimits(t *testing.T) {
	t.Parallel()
	db, err := tsdb.Open(t.TempDir(), nil, nil, tsdb.DefaultOptions(), nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	end := time.Now().Truncate(time.Second)
	querytest.Load(t, db, end)

	// A max-samples limit of 1 cannot hold a 5m window: the engine must
	// refuse, and the refusal is a timeout-class error (retry with less).
	tiny := promql.NewEngine(promql.EngineOpts{MaxSamples: 1, Timeout: time.Minute, LookbackDelta: 5 * time.Minute})
	_, err = query.NewEmbedded(tiny, db).Instant(t.Context(), `avg_over_time(hw_gpu_utilization[5m])`, end)
	require.ErrorIs(t, err, query.ErrTimeout)

	// A closed TSDB is the store being unavailable, not a bad query.
	engine := promql.NewEngine(promql.EngineOpts{MaxSamples: 1e6, Timeout: time.Minute, LookbackDelta: 5 * time.Minute})
	require.NoError(t, db.Close())
	_, err = query.NewEmbedded(engine, db).Instant(t.Context(), `hw_gpu_utilization`, end)
	require.Error(t, err)
	require.NotErrorIs(t, err, query.ErrInvalidQuery)
}
