package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/heteroflow/heteroflow/controlplane/apitypes"
)

// The calls a hub makes on its member clusters (and that any client may
// make on a server).

// IdempotencyHeader carries a submission's idempotency key: a server that
// saw the key answers the task it created then instead of a second one.
const IdempotencyHeader = "Idempotency-Key"

// Me returns the user the credentials act for (401 *Error when they are
// not valid).
func (c *Client) Me(ctx context.Context) (*apitypes.UserJSON, error) {
	var u apitypes.UserJSON
	if err := c.Do(ctx, http.MethodGet, "/api/v1/auth/me", nil, &u); err != nil {
		return nil, err
	}
	return &u, nil
}

// HealthAuthed is Health with the credentials: admins and operators also
// get the checks and the server's version.
func (c *Client) HealthAuthed(ctx context.Context) (*apitypes.HealthJSON, error) {
	var h apitypes.HealthJSON
	if err := c.Do(ctx, http.MethodGet, "/health", nil, &h); err != nil {
		return nil, err
	}
	return &h, nil
}

// SchedulerSummary is the server's cluster overview.
func (c *Client) SchedulerSummary(ctx context.Context) (*apitypes.ClusterSummary, error) {
	var s apitypes.ClusterSummary
	if err := c.Do(ctx, http.MethodGet, "/api/v1/scheduler/summary", nil, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// Devices lists every device with its free capacity (GET /api/v1/slices).
func (c *Client) Devices(ctx context.Context) ([]apitypes.DeviceSlicesJSON, error) {
	var l struct {
		Items []apitypes.DeviceSlicesJSON `json:"items"`
	}
	if err := c.Do(ctx, http.MethodGet, "/api/v1/slices", nil, &l); err != nil {
		return nil, err
	}
	return l.Items, nil
}

// FiringAlerts counts the alerts that are ACTIVE (firing, not acknowledged).
func (c *Client) FiringAlerts(ctx context.Context) (int, error) {
	var l apitypes.List[json.RawMessage]
	if err := c.Do(ctx, http.MethodGet, "/api/v1/alerts?state=ACTIVE&limit=1", nil, &l); err != nil {
		return 0, err
	}
	return l.Total, nil
}

// MonthUsage is the usage report of the current month over every tenant.
func (c *Client) MonthUsage(ctx context.Context) (*apitypes.UsageReportJSON, error) {
	var r apitypes.UsageReportJSON
	if err := c.Do(ctx, http.MethodGet, "/api/v1/billing/report?period=month", nil, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// SubmitTaskOnce is SubmitTask with the caller's idempotency key, so that
// a retried submission creates the task once: the same key and spec
// always answer the same task (within the server's key retention, 24 h).
func (c *Client) SubmitTaskOnce(ctx context.Context, spec apitypes.TaskSpecJSON, key string) (*apitypes.TaskJSON, error) {
	var t apitypes.TaskJSON
	hdr := http.Header{IdempotencyHeader: {key}}
	if err := c.doWith(ctx, http.MethodPost, "/api/v1/tasks", spec, &t, hdr); err != nil {
		return nil, err
	}
	return &t, nil
}

// TaskLogs returns a task's log answer as it came; q holds stream,
// attempt and offset.
func (c *Client) TaskLogs(ctx context.Context, id int64, q url.Values) (json.RawMessage, error) {
	return c.raw(ctx, "/api/v1/tasks/"+strconv.FormatInt(id, 10)+"/logs", q)
}

// TaskWhy returns why a task waits (or where it went) as it came.
func (c *Client) TaskWhy(ctx context.Context, id int64) (json.RawMessage, error) {
	return c.raw(ctx, "/api/v1/tasks/"+strconv.FormatInt(id, 10)+"/why", nil)
}

func (c *Client) raw(ctx context.Context, path string, q url.Values) (json.RawMessage, error) {
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var b []byte
	if err := c.Do(ctx, http.MethodGet, path, nil, &b); err != nil {
		return nil, err
	}
	return json.RawMessage(b), nil
}

// PromQL posts form to the server's Prometheus API endpoint (query or
// query_range) and returns the HTTP status and the body as they came:
// Prometheus' error bodies are part of its API, not ours.
func (c *Client) PromQL(ctx context.Context, endpoint string, form url.Values) (int, []byte, error) {
	if endpoint != "query" && endpoint != "query_range" {
		return 0, nil, fmt.Errorf("promql endpoint %q must be query or query_range", endpoint)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.baseURL()+"/prometheus/api/v1/"+endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if tok := c.token(); tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	res, err := c.http.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("POST /prometheus/api/v1/%s: %w", endpoint, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 64<<20))
	if err != nil {
		return 0, nil, fmt.Errorf("POST /prometheus/api/v1/%s: read response: %w", endpoint, err)
	}
	return res.StatusCode, b, nil
}
