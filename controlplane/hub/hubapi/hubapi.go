// Package hubapi is the REST face of the multi-cluster hub: member
// registration and views (/api/v1/clusters), tasks placed on members
// (/api/v1/hub/tasks) and the cross-cluster PromQL answered by the hub.
// It decodes requests, checks who may see a forwarded task, calls the
// hub.Hub's operations and documents every route; the hub knows nothing
// of HTTP.
package hubapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"

	"github.com/danielgtaylor/huma/v2"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/apitypes"
	"github.com/heteroflow/heteroflow/controlplane/auth"
	"github.com/heteroflow/heteroflow/controlplane/httpapi"
	"github.com/heteroflow/heteroflow/controlplane/hub"
)

type handlers struct {
	h   *hub.Hub
	api *httpapi.API
}

// Mount registers the hub's routes on api.
func Mount(api *httpapi.API, h *hub.Hub) {
	x := &handlers{h: h, api: api}
	p := httpapi.Prefix
	ctags, ttags := []string{"clusters"}, []string{"hub tasks"}
	cread := httpapi.Perm(auth.ResClusters, auth.ActRead)
	httpapi.Register(api, huma.Operation{OperationID: "list-clusters", Method: http.MethodGet, Path: p + "/clusters",
		Summary: "Member clusters side by side: health, nodes, devices by vendor/model, free capacity, queue, firing alerts, usage (as last polled)",
		Tags:    ctags}, cread, x.list)
	httpapi.Register(api, huma.Operation{OperationID: "register-cluster", Method: http.MethodPost, Path: p + "/clusters",
		Metadata: httpapi.Audited("cluster.register"), DefaultStatus: http.StatusCreated, Tags: ctags, Errors: []int{409},
		Summary: "Register a member cluster; it is checked at once (reachable, key valid, same major.minor version) and nothing is stored on failure"},
		httpapi.Perm(auth.ResClusters, auth.ActWrite), x.register)
	httpapi.Register(api, huma.Operation{OperationID: "refresh-clusters", Method: http.MethodPost, Path: p + "/clusters/refresh",
		Metadata: httpapi.Audited("cluster.refresh"), Tags: ctags,
		Summary: "Poll every member now (the leader also polls them periodically)"}, httpapi.Perm(auth.ResClusters, auth.ActWrite), x.refresh)
	httpapi.Register(api, huma.Operation{OperationID: "get-cluster", Method: http.MethodGet, Path: p + "/clusters/{id}",
		Summary: "One member cluster", Tags: ctags, Errors: []int{404}}, cread, x.get)
	httpapi.Register(api, huma.Operation{OperationID: "remove-cluster", Method: http.MethodDelete, Path: p + "/clusters/{id}",
		Metadata: httpapi.Audited("cluster.remove"), DefaultStatus: http.StatusNoContent, Tags: ctags, Errors: []int{404},
		Summary: "Unregister a member (its unfinished forwarded tasks become unknown)"}, httpapi.Perm(auth.ResClusters, auth.ActDelete), x.remove)

	// People only: the hub knows callers by user id, and a node's agent key
	// carries the id of the administrator who issued its bootstrap token,
	// so it would read that administrator's forwarded tasks (env, logs).
	tread := httpapi.Perm(auth.ResTasks, auth.ActRead).ForPeople()
	httpapi.Register(api, huma.Operation{OperationID: "list-hub-tasks", Method: http.MethodGet, Path: p + "/hub/tasks",
		Summary: "Tasks the hub placed on members (a user's own; all for admins and operators)", Tags: ttags}, tread, x.tasks)
	httpapi.Register(api, huma.Operation{OperationID: "submit-hub-task", Method: http.MethodPost, Path: p + "/hub/tasks",
		Metadata: httpapi.Audited("hub-task.submit"), DefaultStatus: http.StatusCreated, Tags: ttags, Errors: []int{409},
		Summary: "Place a task on the best member (cluster: auto, or a list) by free capacity, queue and fragmentation, and forward it"},
		httpapi.Perm(auth.ResTasks, auth.ActWrite), x.submit)
	httpapi.Register(api, huma.Operation{OperationID: "get-hub-task", Method: http.MethodGet, Path: p + "/hub/tasks/{id}",
		Summary: "A forwarded task with its member's live state (unknown while the member is unreachable)", Tags: ttags, Errors: []int{404}},
		tread, x.task)
	httpapi.Register(api, huma.Operation{OperationID: "get-hub-task-logs", Method: http.MethodGet, Path: p + "/hub/tasks/{id}/logs",
		Summary: "A forwarded task's output, read from its member (?stream, attempt, offset as on the member)", Tags: ttags,
		Errors: []int{404, 409}}, tread, x.logs)
	httpapi.Register(api, huma.Operation{OperationID: "get-hub-task-why", Method: http.MethodGet, Path: p + "/hub/tasks/{id}/why",
		Summary: "Why a forwarded task waits on its member", Tags: ttags, Errors: []int{404, 409}}, tread, x.why)
	httpapi.Register(api, huma.Operation{OperationID: "cancel-hub-task", Method: http.MethodPost, Path: p + "/hub/tasks/{id}/cancel",
		Metadata: httpapi.Audited("hub-task.cancel"), Tags: ttags, Errors: []int{404, 409},
		Summary: "Cancel a forwarded task on its member"}, httpapi.Perm(auth.ResTasks, auth.ActCancel), x.cancel)
}

type idIn struct {
	ID int64 `path:"id" minimum:"1"`
}

type registerIn struct {
	Body apitypes.ClusterRegisterJSON
}

func caller(ctx context.Context) hub.Caller {
	p := httpapi.PrincipalFrom(ctx)
	if p == nil {
		return hub.Caller{}
	}
	return hub.Caller{ID: p.UserID, Name: p.Username, Tenant: p.KeyTenant,
		SeeAll: p.KeyTenant == "" && (p.Role == controlplane.RoleAdmin || p.Role == controlplane.RoleOperator)}
}

func (x *handlers) list(ctx context.Context, _ *struct{}) (*httpapi.Body[httpapi.List[apitypes.ClusterJSON]], error) {
	out, err := x.h.Clusters(ctx)
	if err != nil {
		return nil, err
	}
	return &httpapi.Body[httpapi.List[apitypes.ClusterJSON]]{Body: httpapi.List[apitypes.ClusterJSON]{Items: out, Total: len(out), Limit: len(out)}}, nil
}

func (x *handlers) register(ctx context.Context, in *registerIn) (*httpapi.Body[apitypes.ClusterJSON], error) {
	httpapi.SetAudit(ctx, "cluster.register", "cluster/"+in.Body.Name)
	out, err := x.h.Register(ctx, in.Body, caller(ctx).Name)
	if err != nil {
		return nil, err
	}
	return &httpapi.Body[apitypes.ClusterJSON]{Body: *out}, nil
}

func (x *handlers) refresh(ctx context.Context, _ *struct{}) (*httpapi.Body[httpapi.List[apitypes.ClusterJSON]], error) {
	x.h.PollOnce(ctx)
	return x.list(ctx, nil)
}

func (x *handlers) get(ctx context.Context, in *idIn) (*httpapi.Body[apitypes.ClusterJSON], error) {
	out, err := x.h.Cluster(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	return &httpapi.Body[apitypes.ClusterJSON]{Body: *out}, nil
}

func (x *handlers) remove(ctx context.Context, in *idIn) (*struct{}, error) {
	name, err := x.h.Remove(ctx, in.ID)
	httpapi.SetAudit(ctx, "cluster.remove", "cluster/"+name)
	return nil, err
}

type tasksIn struct {
	httpapi.PageParams
	Cluster string `query:"cluster" maxLength:"63" doc:"Only tasks placed on this member"`
}

func (x *handlers) tasks(ctx context.Context, in *tasksIn) (*httpapi.Body[httpapi.List[apitypes.HubTaskJSON]], error) {
	pg := controlplane.Page{Limit: in.Limit, Offset: in.Offset}.Normalize()
	out, total, err := x.h.Tasks(ctx, caller(ctx), in.Cluster, pg)
	if err != nil {
		return nil, err
	}
	return &httpapi.Body[httpapi.List[apitypes.HubTaskJSON]]{Body: httpapi.List[apitypes.HubTaskJSON]{Items: out, Total: total,
		Limit: pg.Limit, Offset: pg.Offset}}, nil
}

type submitIn struct {
	IdempotencyKey string `header:"Idempotency-Key" maxLength:"255" doc:"Makes the submission safe to retry: a second request with the same key from the same caller and the same body is answered with the task the first one placed (header Idempotent-Replayed: true) instead of placing another; the same key with a different body is refused (409, code idempotency_key_reused), and while the first is still being forwarded (409, code idempotency_key_in_progress). Keys are kept 24 hours."`
	Body           apitypes.HubTaskSubmitJSON
}

type submitOut struct {
	Replayed string `header:"Idempotent-Replayed" doc:"true when the task was placed by an earlier request with the same Idempotency-Key"`
	Body     apitypes.HubTaskJSON
}

func (x *handlers) submit(ctx context.Context, in *submitIn) (*submitOut, error) {
	var key *controlplane.SubmitKey
	if in.IdempotencyKey != "" {
		key = &controlplane.SubmitKey{Key: in.IdempotencyKey, Hash: httpapi.SubmitHash(in.Body)}
	}
	// The member admits whatever tenant the hub's key names: the hub
	// admits the caller into the task's tenant first, as POST /tasks does.
	if err := x.api.AdmitForwardedTask(ctx, &in.Body.Task); err != nil {
		return nil, err
	}
	out, replayed, err := x.h.SubmitOnce(ctx, in.Body, caller(ctx), key)
	if err != nil {
		return nil, err
	}
	httpapi.SetAudit(ctx, "hub-task.submit", "hub-task/"+strconv.FormatInt(out.ID, 10))
	httpapi.SetAuditDetail(ctx, "cluster "+out.Cluster+", task "+strconv.FormatInt(out.MemberTaskID, 10))
	res := &submitOut{Body: *out}
	if replayed {
		res.Replayed = "true"
	}
	return res, nil
}

func (x *handlers) task(ctx context.Context, in *idIn) (*httpapi.Body[apitypes.HubTaskJSON], error) {
	out, err := x.h.Task(ctx, in.ID, caller(ctx))
	if err != nil {
		return nil, err
	}
	return &httpapi.Body[apitypes.HubTaskJSON]{Body: *out}, nil
}

type logsIn struct {
	ID      int64  `path:"id" minimum:"1"`
	Stream  string `query:"stream" enum:"stdout,stderr," doc:"stdout or stderr (default both, as on the member)"`
	Attempt int    `query:"attempt" minimum:"0"`
	Offset  int64  `query:"offset" minimum:"0"`
}

// passThrough is a member's answer as it came (the member's schema).
type passThrough struct {
	Body any
}

func (x *handlers) logs(ctx context.Context, in *logsIn) (*passThrough, error) {
	q := url.Values{}
	if in.Stream != "" {
		q.Set("stream", in.Stream)
	}
	if in.Attempt > 0 {
		q.Set("attempt", strconv.Itoa(in.Attempt))
	}
	if in.Offset > 0 {
		q.Set("offset", strconv.FormatInt(in.Offset, 10))
	}
	raw, err := x.h.Logs(ctx, in.ID, caller(ctx), q)
	return decoded(raw, err)
}

func (x *handlers) why(ctx context.Context, in *idIn) (*passThrough, error) {
	raw, err := x.h.Why(ctx, in.ID, caller(ctx))
	return decoded(raw, err)
}

func decoded(raw json.RawMessage, err error) (*passThrough, error) {
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return &passThrough{Body: v}, nil
}

func (x *handlers) cancel(ctx context.Context, in *idIn) (*httpapi.Body[apitypes.HubTaskJSON], error) {
	httpapi.SetAudit(ctx, "hub-task.cancel", "hub-task/"+strconv.FormatInt(in.ID, 10))
	out, err := x.h.Cancel(ctx, in.ID, caller(ctx))
	if err != nil {
		return nil, err
	}
	return &httpapi.Body[apitypes.HubTaskJSON]{Body: *out}, nil
}
