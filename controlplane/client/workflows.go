package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/heteroflow/heteroflow/controlplane/apitypes"
)

// WorkflowList is a page of workflows.
type WorkflowList = apitypes.List[apitypes.WorkflowJSON]

func workflowPath(id int64, tail string) string {
	return "/api/v1/workflows/" + strconv.FormatInt(id, 10) + tail
}

// ValidateWorkflow checks a document without storing it.
func (c *Client) ValidateWorkflow(ctx context.Context, in apitypes.WorkflowSubmitJSON) (*apitypes.WorkflowPlanJSON, error) {
	var p apitypes.WorkflowPlanJSON
	if err := c.Do(ctx, http.MethodPost, "/api/v1/workflows/validate", in, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// SubmitWorkflow creates a workflow. Like SubmitTask it sends a fresh
// Idempotency-Key, so that a retry on the next server after one died
// before answering returns the workflow the first attempt created.
func (c *Client) SubmitWorkflow(ctx context.Context, in apitypes.WorkflowSubmitJSON) (*apitypes.WorkflowDetailJSON, error) {
	return c.SubmitWorkflowOnce(ctx, in, NewIdempotencyKey())
}

// SubmitWorkflowOnce creates a workflow with the caller's Idempotency-Key:
// the same key and request again (for 24 h) answer the workflow the first
// created; the same key with another request is a 409.
func (c *Client) SubmitWorkflowOnce(ctx context.Context, in apitypes.WorkflowSubmitJSON, key string) (*apitypes.WorkflowDetailJSON, error) {
	var w apitypes.WorkflowDetailJSON
	if err := c.doWith(ctx, http.MethodPost, "/api/v1/workflows", in, &w, http.Header{IdempotencyHeader: {key}}); err != nil {
		return nil, err
	}
	return &w, nil
}

// GetWorkflow fetches a workflow with its steps.
func (c *Client) GetWorkflow(ctx context.Context, id int64) (*apitypes.WorkflowDetailJSON, error) {
	return c.workflowCall(ctx, http.MethodGet, workflowPath(id, ""), nil)
}

// ListWorkflows lists workflows; q holds the filters (state, q, owner, limit, offset).
func (c *Client) ListWorkflows(ctx context.Context, q url.Values) (*WorkflowList, error) {
	var l WorkflowList
	path := "/api/v1/workflows"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	if err := c.Do(ctx, http.MethodGet, path, nil, &l); err != nil {
		return nil, err
	}
	return &l, nil
}

// CancelWorkflow cancels a workflow and stops its running steps.
func (c *Client) CancelWorkflow(ctx context.Context, id int64, reason string) (*apitypes.WorkflowDetailJSON, error) {
	return c.workflowCall(ctx, http.MethodPost, workflowPath(id, "/cancel"), map[string]string{"reason": reason})
}

// RetryWorkflow restarts a failed or cancelled workflow (from a step when from is set).
func (c *Client) RetryWorkflow(ctx context.Context, id int64, from string) (*apitypes.WorkflowDetailJSON, error) {
	return c.workflowCall(ctx, http.MethodPost, workflowPath(id, "/retry"), map[string]string{"from": from})
}

// ResubmitWorkflow submits a workflow's spec again as a new workflow.
func (c *Client) ResubmitWorkflow(ctx context.Context, id int64) (*apitypes.WorkflowDetailJSON, error) {
	return c.workflowCall(ctx, http.MethodPost, workflowPath(id, "/resubmit"), nil)
}

// WorkflowEvents lists a workflow's state changes.
func (c *Client) WorkflowEvents(ctx context.Context, id int64) (*apitypes.WorkflowEventsJSON, error) {
	var e apitypes.WorkflowEventsJSON
	if err := c.Do(ctx, http.MethodGet, workflowPath(id, "/events"), nil, &e); err != nil {
		return nil, err
	}
	return &e, nil
}

func (c *Client) workflowCall(ctx context.Context, method, path string, in any) (*apitypes.WorkflowDetailJSON, error) {
	var w apitypes.WorkflowDetailJSON
	if err := c.Do(ctx, method, path, in, &w); err != nil {
		return nil, err
	}
	return &w, nil
}
