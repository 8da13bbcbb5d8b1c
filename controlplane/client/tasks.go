package client

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"net/url"
	"strconv"

	"github.com/heteroflow/heteroflow/controlplane/apitypes"
)

// TaskList is a page of tasks.
type TaskList = apitypes.List[apitypes.TaskJSON]

// SubmitTask creates a task. It sends a fresh Idempotency-Key, so that
// when a server dies before answering, the retry (on the next server)
// returns the task the first attempt created instead of a second one.
func (c *Client) SubmitTask(ctx context.Context, spec apitypes.TaskSpecJSON) (*apitypes.TaskJSON, error) {
	return c.SubmitTaskOnce(ctx, spec, NewIdempotencyKey())
}

// NewIdempotencyKey returns a random key (128 bits, hex).
func NewIdempotencyKey() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return hex.EncodeToString(b[:])
}

// ListTasks lists tasks; q holds the filters (state, owner, label, since, until, q, tenant, limit, offset).
func (c *Client) ListTasks(ctx context.Context, q url.Values) (*TaskList, error) {
	var l TaskList
	path := "/api/v1/tasks"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	if err := c.Do(ctx, http.MethodGet, path, nil, &l); err != nil {
		return nil, err
	}
	return &l, nil
}

// GetTask fetches one task.
func (c *Client) GetTask(ctx context.Context, id int64) (*apitypes.TaskJSON, error) {
	var t apitypes.TaskJSON
	if err := c.Do(ctx, http.MethodGet, "/api/v1/tasks/"+strconv.FormatInt(id, 10), nil, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

// CancelTask cancels a task.
func (c *Client) CancelTask(ctx context.Context, id int64) (*apitypes.TaskJSON, error) {
	var t apitypes.TaskJSON
	if err := c.Do(ctx, http.MethodPost, "/api/v1/tasks/"+strconv.FormatInt(id, 10)+"/cancel", nil, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

// ListAudit queries the audit log.
func (c *Client) ListAudit(ctx context.Context, q url.Values) (*apitypes.List[apitypes.AuditJSON], error) {
	var l apitypes.List[apitypes.AuditJSON]
	if err := c.Do(ctx, http.MethodGet, "/api/v1/audit?"+q.Encode(), nil, &l); err != nil {
		return nil, err
	}
	return &l, nil
}

// Health returns /health's body; a 503 is returned as *Error.
func (c *Client) Health(ctx context.Context) (*apitypes.HealthJSON, error) {
	var h apitypes.HealthJSON
	if err := c.do(ctx, http.MethodGet, "/health", nil, &h, false); err != nil {
		return nil, err
	}
	return &h, nil
}
