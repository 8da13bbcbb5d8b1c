package metricstore_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane/metricstore"
)

var quiet = slog.New(slog.DiscardHandler)

// serve mounts the store the way the server does (minus auth).
func serve(t testing.TB, s *metricstore.Store) *httptest.Server {
	t.Helper()
	r := chi.NewRouter()
	s.IngestRoutes(r)
	r.Route("/prometheus", s.QueryRoutes)
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return srv
}

func openEmbedded(t testing.TB, reg *prometheus.Registry) *metricstore.Store {
	t.Helper()
	cfg := metricstore.Defaults()
	cfg.Dir = t.TempDir()
	cfg.SelfIngestInterval = time.Second
	s, err := metricstore.Open(cfg, metricstore.Options{Registerer: reg, Gatherer: reg, Instance: "test", Version: "test", Logger: quiet})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s
}

// TestAcceptancePrometheusRemoteWritesIntoUs: a real Prometheus scrapes
// itself and remote-writes into our ingest handler; promtool and
// client_golang then read it back through our /prometheus API.
func TestAcceptancePrometheusRemoteWritesIntoUs(t *testing.T) {
	requireBinary(t, promtoolBin)
	reg := prometheus.NewRegistry()
	s := openEmbedded(t, reg)
	srv := serve(t, s)

	promAddr := freeAddr(t)
	cfg := `global: {scrape_interval: 1s}
scrape_configs:
  - job_name: prometheus
    static_configs: [{targets: ["` + promAddr + `"]}]
remote_write:
  - url: ` + srv.URL + `/api/v1/write
    queue_config: {batch_send_deadline: 1s}
`
	_ = startPrometheusAt(t, promAddr, cfg)

	c, err := api.NewClient(api.Config{Address: srv.URL + "/prometheus"})
	require.NoError(t, err)
	papi := v1.NewAPI(c)
	ctx := context.Background()
	require.Eventually(t, func() bool {
		v, _, _, err := papi.Query(ctx, `up{job="prometheus"}`, time.Now())
		return err == nil && len(v.(model.Vector)) == 1
	}, 60*time.Second, 500*time.Millisecond, "Prometheus' remote-written up never arrived")

	t.Run("promtool query instant", func(t *testing.T) {
		out, err := exec.Command(promtoolBin, "query", "instant", srv.URL+"/prometheus", `up`).CombinedOutput()
		require.NoError(t, err, string(out))
		require.Contains(t, string(out), `up{instance="`+promAddr+`", job="prometheus"} => 1`)
	})
	t.Run("promtool rejects a bad query with our error", func(t *testing.T) {
		out, err := exec.Command(promtoolBin, "query", "instant", srv.URL+"/prometheus", `up{`).CombinedOutput()
		require.Error(t, err)
		require.Contains(t, string(out), "bad_data")
	})
	t.Run("client_golang range, series, labels, values, metadata, buildinfo", func(t *testing.T) {
		now := time.Now()
		m, _, _, err := papi.QueryRange(ctx, `up`, v1.Range{Start: now.Add(-30 * time.Second), End: now, Step: time.Second})
		require.NoError(t, err)
		require.NotEmpty(t, m.(model.Matrix))

		ss, _, _, err := papi.Series(ctx, []string{`up`}, now.Add(-time.Hour), now)
		require.NoError(t, err)
		require.Len(t, ss, 1)
		require.Equal(t, model.LabelValue("prometheus"), ss[0]["job"])

		names, _, _, err := papi.LabelNames(ctx, nil, now.Add(-time.Hour), now)
		require.NoError(t, err)
		require.Contains(t, names, model.LabelName("job"))
		require.Contains(t, names, model.LabelName("__name__"))

		vals, _, _, err := papi.LabelValues(ctx, "__name__", []string{`{job="prometheus"}`}, now.Add(-time.Hour), now)
		require.NoError(t, err)
		require.Contains(t, vals, model.LabelValue("prometheus_build_info"))

		bi, err := papi.Buildinfo(ctx)
		require.NoError(t, err)
		require.Equal(t, "test", bi.Version)

	})
	t.Run("self-ingested server metrics answer PromQL", func(t *testing.T) {
		require.Eventually(t, func() bool {
			v, _, _, err := papi.Query(ctx, `sum(heteroflow_ingest_requests_total{job="heteroflow",instance="test",protocol="remote_write",code="204"})`, time.Now())
			return err == nil && len(v.(model.Vector)) == 1 && v.(model.Vector)[0].Value > 0
		}, 10*time.Second, 200*time.Millisecond)
		v, _, _, err := papi.Query(ctx, `prometheus_tsdb_head_series{job="heteroflow"}`, time.Now())
		require.NoError(t, err)
		require.NotEmpty(t, v.(model.Vector))

		// Self-ingestion records metadata too, served by /api/v1/metadata.
		md, err := papi.Metadata(ctx, "heteroflow_ingest_requests_total", "")
		require.NoError(t, err)
		require.Len(t, md["heteroflow_ingest_requests_total"], 1)
		require.Equal(t, v1.MetricTypeCounter, md["heteroflow_ingest_requests_total"][0].Type)
	})
}

// TestRemoteModeForwardsIngest: pushes into a remote-mode server land in
// VictoriaMetrics and come back through our /prometheus proxy.
func TestRemoteModeForwardsIngest(t *testing.T) {
	addr := startVictoria(t)
	cfg := metricstore.Defaults()
	cfg.Mode = metricstore.ModeRemote
	cfg.Remote.QueryURL = url(addr, "")
	cfg.Remote.WriteURL = url(addr, "/api/v1/write")
	s, err := metricstore.Open(cfg, metricstore.Options{Logger: quiet})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	srv := serve(t, s)

	body := remoteWriteBody(t, "forwarded_metric", time.Now().Add(-10*time.Second), 42)
	resp, err := srv.Client().Post(srv.URL+"/api/v1/write", "application/x-protobuf", strings.NewReader(string(body)))
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, 204, resp.StatusCode)

	c, err := api.NewClient(api.Config{Address: srv.URL + "/prometheus"})
	require.NoError(t, err)
	papi := v1.NewAPI(c)
	require.Eventually(t, func() bool {
		v, _, _, err := papi.Query(context.Background(), `forwarded_metric`, time.Now())
		return err == nil && len(v.(model.Vector)) == 1 && v.(model.Vector)[0].Value == 42
	}, 20*time.Second, 250*time.Millisecond)
}

func TestRemoteModeStoreDownIs503(t *testing.T) {
	cfg := metricstore.Defaults()
	cfg.Mode = metricstore.ModeRemote
	dead := freeAddr(t) // nothing listens here
	cfg.Remote.QueryURL = url(dead, "")
	cfg.Remote.WriteURL = url(dead, "/api/v1/write")
	s, err := metricstore.Open(cfg, metricstore.Options{Logger: quiet})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	srv := serve(t, s)
	body := remoteWriteBody(t, "m", time.Now(), 1)
	resp, err := srv.Client().Post(srv.URL+"/api/v1/write", "application/x-protobuf", strings.NewReader(string(body)))
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, 503, resp.StatusCode)
	require.NotEmpty(t, resp.Header.Get("Retry-After"))

	resp, err = srv.Client().Get(srv.URL + "/prometheus/api/v1/query?query=up")
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, 503, resp.StatusCode)
}
