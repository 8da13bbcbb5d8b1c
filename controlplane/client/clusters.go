package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"

	"github.com/heteroflow/heteroflow/controlplane/apitypes"
)

// The calls a user makes on a hub: its member clusters, and the tasks it
// places on them (/api/v1/clusters, /api/v1/hub/tasks).

// ClusterList is the hub's member clusters.
type ClusterList = apitypes.List[apitypes.ClusterJSON]

// HubTaskList is a page of tasks the hub placed on members.
type HubTaskList = apitypes.List[apitypes.HubTaskJSON]

func clusterPath(id int64) string { return "/api/v1/clusters/" + strconv.FormatInt(id, 10) }

func hubTaskPath(id int64, tail string) string {
	return "/api/v1/hub/tasks/" + strconv.FormatInt(id, 10) + tail
}

// ListClusters lists the members as the hub last polled them.
func (c *Client) ListClusters(ctx context.Context) (*ClusterList, error) {
	return call[ClusterList](ctx, c, http.MethodGet, "/api/v1/clusters", nil)
}

// RefreshClusters polls every member now and lists them.
func (c *Client) RefreshClusters(ctx context.Context) (*ClusterList, error) {
	return call[ClusterList](ctx, c, http.MethodPost, "/api/v1/clusters/refresh", nil)
}

// RegisterCluster registers a member; the hub checks it at once.
func (c *Client) RegisterCluster(ctx context.Context, in apitypes.ClusterRegisterJSON) (*apitypes.ClusterJSON, error) {
	return call[apitypes.ClusterJSON](ctx, c, http.MethodPost, "/api/v1/clusters", in)
}

// GetCluster fetches one member.
func (c *Client) GetCluster(ctx context.Context, id int64) (*apitypes.ClusterJSON, error) {
	return call[apitypes.ClusterJSON](ctx, c, http.MethodGet, clusterPath(id), nil)
}

// RemoveCluster unregisters a member.
func (c *Client) RemoveCluster(ctx context.Context, id int64) error {
	return c.Do(ctx, http.MethodDelete, clusterPath(id), nil, nil)
}

// SubmitHubTask has the hub place a task on a member and forward it. Like
// SubmitTask it sends a fresh Idempotency-Key, so that a retry on another
// hub server after one died before answering places the task once.
func (c *Client) SubmitHubTask(ctx context.Context, in apitypes.HubTaskSubmitJSON) (*apitypes.HubTaskJSON, error) {
	return c.SubmitHubTaskOnce(ctx, in, NewIdempotencyKey())
}

// SubmitHubTaskOnce is SubmitHubTask with the caller's key: the same key
// and request again (for 24 h) answer the task the first placed.
func (c *Client) SubmitHubTaskOnce(ctx context.Context, in apitypes.HubTaskSubmitJSON, key string) (*apitypes.HubTaskJSON, error) {
	var out apitypes.HubTaskJSON
	if err := c.doWith(ctx, http.MethodPost, "/api/v1/hub/tasks", in, &out, http.Header{IdempotencyHeader: {key}}); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListHubTasks lists the hub's forwarded tasks; q holds cluster, limit, offset.
func (c *Client) ListHubTasks(ctx context.Context, q url.Values) (*HubTaskList, error) {
	path := "/api/v1/hub/tasks"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	return call[HubTaskList](ctx, c, http.MethodGet, path, nil)
}

// GetHubTask fetches a forwarded task with its member's live view.
func (c *Client) GetHubTask(ctx context.Context, id int64) (*apitypes.HubTaskJSON, error) {
	return call[apitypes.HubTaskJSON](ctx, c, http.MethodGet, hubTaskPath(id, ""), nil)
}

// CancelHubTask cancels a forwarded task on its member.
func (c *Client) CancelHubTask(ctx context.Context, id int64) (*apitypes.HubTaskJSON, error) {
	return call[apitypes.HubTaskJSON](ctx, c, http.MethodPost, hubTaskPath(id, "/cancel"), nil)
}

// HubTaskLogs returns a forwarded task's log answer as its member gave it;
// q holds stream, attempt and offset.
func (c *Client) HubTaskLogs(ctx context.Context, id int64, q url.Values) (json.RawMessage, error) {
	return c.raw(ctx, hubTaskPath(id, "/logs"), q)
}

// HubTaskWhy returns why a forwarded task waits, as its member said.
func (c *Client) HubTaskWhy(ctx context.Context, id int64) (json.RawMessage, error) {
	return c.raw(ctx, hubTaskPath(id, "/why"), nil)
}

// call sends one request and decodes the answer into a new Out.
func call[Out any](ctx context.Context, c *Client, method, path string, in any) (*Out, error) {
	var out Out
	if err := c.Do(ctx, method, path, in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
