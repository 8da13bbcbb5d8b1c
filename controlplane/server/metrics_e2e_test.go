package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane/client"
)

// TestMetricsWiring pushes an OTLP/JSON gauge through the server's ingest
// route and reads it back with PromQL under /prometheus, with the access
// rules of the permission table: anonymous pushes and queries are refused.
func TestMetricsWiring(t *testing.T) {
	s, _ := startServer(t, "", map[string]string{EnvAdminPassword: "Metrics-Pass-123"})
	base := "http://" + s.APIAddr()
	c, err := client.New(base, nil)
	require.NoError(t, err)
	cr, err := c.Login(t.Context(), BootstrapAdmin, "Metrics-Pass-123")
	require.NoError(t, err)

	now := time.Now().UnixNano()
	payload := fmt.Sprintf(`{"resourceMetrics":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"e2e"}}]},
	 "scopeMetrics":[{"metrics":[{"name":"hw.gpu.utilization","unit":"1","gauge":{"dataPoints":[
	  {"asDouble":0.75,"timeUnixNano":"%d","attributes":[{"key":"hw.vendor","value":{"stringValue":"nvidia"}}]}]}}]}]}]}`, now)
	push := func(token string) int {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/api/v1/otlp/v1/metrics", bytes.NewBufferString(payload))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	require.Equal(t, http.StatusUnauthorized, push(""))
	require.Equal(t, http.StatusOK, push(cr.AccessToken))

	query := func(token string) (int, []byte) {
		u := base + "/prometheus/api/v1/query?" + url.Values{"query": {`hw_gpu_utilization_ratio{hw_vendor="nvidia"}`}}.Encode()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, u, nil)
		require.NoError(t, err)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var buf bytes.Buffer
		_, _ = buf.ReadFrom(resp.Body)
		return resp.StatusCode, buf.Bytes()
	}
	code, _ := query("")
	require.Equal(t, http.StatusUnauthorized, code)
	code, body := query(cr.AccessToken)
	require.Equal(t, http.StatusOK, code, string(body))
	var out struct {
		Status string
		Data   struct {
			Result []struct {
				Value [2]any
			}
		}
	}
	require.NoError(t, json.Unmarshal(body, &out))
	require.Equal(t, "success", out.Status)
	require.Len(t, out.Data.Result, 1, string(body))
	require.Equal(t, "0.75", out.Data.Result[0].Value[1])
}
