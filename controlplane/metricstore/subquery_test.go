package metricstore_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	neturl "net/url"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
)

// TestSubqueryWithoutStep: x[10m:] takes its step from the default
// evaluation interval (1m, as Prometheus) through the HTTP API and through
// the Querier every consumer uses, instead of panicking.
func TestSubqueryWithoutStep(t *testing.T) {
	t.Parallel()
	s := openEmbedded(t, prometheus.NewRegistry())
	srv := serve(t, s)
	now := time.Now().Truncate(time.Second)
	// 20 minutes of 30 s samples: every 1m step of the 10m subquery finds
	// one within its lookback, wherever now falls in the minute.
	for i := range 40 {
		body := remoteWriteBody(t, "sub_metric", now.Add(-time.Duration(i)*30*time.Second), float64(i))
		resp, err := http.Post(srv.URL+"/api/v1/write", "application/x-protobuf", strings.NewReader(string(body)))
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		require.Equal(t, http.StatusNoContent, resp.StatusCode)
	}
	// 1m steps over (now-10m, now], aligned to the minute: always 10.
	v, err := s.Querier().Instant(context.Background(), `count_over_time(sub_metric[10m:])`, now)
	require.NoError(t, err)
	require.Len(t, v, 1)
	require.EqualValues(t, 10, v[0].Value)

	resp, err := http.Get(srv.URL + "/prometheus/api/v1/query?" + neturl.Values{"query": {`count_over_time(sub_metric[10m:])`}, "time": {now.Format(time.RFC3339)}}.Encode())
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	var env struct {
		Data struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(body, &env))
	require.Len(t, env.Data.Result, 1)
	require.Equal(t, "10", env.Data.Result[0].Value[1])
}
