package server

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane/client"
)

// promAnswer is the Prometheus HTTP API's envelope.
type promAnswer struct {
	Status    string `json:"status"`
	ErrorType string `json:"errorType"`
	Error     string `json:"error"`
}

// queryAs runs an instant query through /prometheus with cfg's limits and
// returns the status, the content type and the decoded envelope; a dropped
// connection fails the test.
func queryAs(t *testing.T, cfg Config, q string) (int, string, promAnswer) {
	t.Helper()
	const pass = "Query-Limits-123"
	cfg.APIAddr, cfg.ConsoleAddr = "127.0.0.1:0", ""
	cfg.DataDir = t.TempDir()
	s := startConfigured(t, cfg, map[string]string{EnvAdminPassword: pass})
	base := "http://" + s.APIAddr()
	c, err := client.New(base, nil)
	require.NoError(t, err)
	cr, err := c.Login(t.Context(), BootstrapAdmin, pass)
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet,
		base+"/prometheus/api/v1/query?"+url.Values{"query": {q}}.Encode(), nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+cr.AccessToken)
	resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
	require.NoError(t, err, "the server answers; it does not drop the connection")
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err, "the answer is complete")
	var a promAnswer
	require.NoError(t, json.Unmarshal(body, &a), "a JSON answer: %s", body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), a
}

// TestLongQueryAnswersJSONTimeout: a query that runs past the configured
// query timeout answers Prometheus' JSON timeout error (503, errorType
// timeout), well inside the API's write timeout.
func TestLongQueryAnswersJSONTimeout(t *testing.T) {
	cfg := Defaults()
	cfg.Metrics.Query.Timeout = 100 * time.Millisecond
	start := time.Now()
	// A thirty-day subquery at one-second resolution: 2.6 million
	// evaluations, seconds of work on any machine.
	code, ctype, a := queryAs(t, cfg, `count_over_time(vector(1)[30d:1s])`)
	require.Equal(t, http.StatusServiceUnavailable, code, "%+v", a)
	require.Contains(t, ctype, "application/json")
	require.Equal(t, "error", a.Status)
	require.Equal(t, "timeout", a.ErrorType, a.Error)
	require.Contains(t, a.Error, "query timed out")
	require.Less(t, time.Since(start), APIWriteTimeout, "answered before the write timeout")
}

// TestSamplesLimitAnswersJSONError: a query that would load more samples
// than metrics.query.max_samples answers a clear JSON error (422) instead
// of running the server out of memory.
func TestSamplesLimitAnswersJSONError(t *testing.T) {
	cfg := Defaults()
	cfg.Metrics.Query.MaxSamples = 1000
	// An hour at one-second resolution is 3,600 samples.
	code, ctype, a := queryAs(t, cfg, `count_over_time(vector(1)[1h:1s])`)
	require.Equal(t, http.StatusUnprocessableEntity, code, "%+v", a)
	require.Contains(t, ctype, "application/json")
	require.Equal(t, "error", a.Status)
	require.Equal(t, "execution", a.ErrorType)
	require.Contains(t, a.Error, "too many samples")

	// Within the limit the same shape answers.
	code, _, a = queryAs(t, cfg, `count_over_time(vector(1)[1m:1s])`)
	require.Equal(t, http.StatusOK, code, "%+v", a)
	require.Equal(t, "success", a.Status)
}
