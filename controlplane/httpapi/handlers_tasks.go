package httpapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/apitypes"
	"github.com/heteroflow/heteroflow/controlplane/auth"
	"github.com/heteroflow/heteroflow/controlplane/tracing"
)

type createTaskIn struct {
	IdempotencyKey string `header:"Idempotency-Key" maxLength:"255" doc:"Makes the submission safe to retry: a second request with the same key from the same caller and the same body is answered with the task the first one created (header Idempotent-Replayed: true) instead of creating another; the same key with a different body is refused (409, code idempotency_key_reused). Keys are kept 24 hours."`
	Body           TaskSpecJSON
}

type createTaskOut struct {
	Replayed string `header:"Idempotent-Replayed" doc:"true when the task was created by an earlier request with the same Idempotency-Key"`
	Body     TaskJSON
}

type listTasksIn struct {
	PageParams
	State  string `query:"state" doc:"Comma-separated states, e.g. queued,running"`
	Owner  string `query:"owner" doc:"Owner username or id (ignored for role user: always self)"`
	Label  string `query:"label" doc:"Comma-separated key=value pairs; all must match"`
	Since  string `query:"since" doc:"Created at or after (RFC 3339)"`
	Until  string `query:"until" doc:"Created before (RFC 3339)"`
	Q      string `query:"q" maxLength:"256" doc:"Substring of the name"`
	Tenant string `query:"tenant" maxLength:"128"`
}

type cancelTaskIn struct {
	ID   int64 `path:"id" minimum:"1"`
	Body *struct {
		Reason string `json:"reason,omitempty" maxLength:"512"`
	} `required:"false"`
}

func (a *API) registerTasks() {
	tags := []string{"tasks"}
	Register(a, huma.Operation{OperationID: "create-task", Metadata: Audited("task.create"), Method: http.MethodPost, Path: Prefix + "/tasks",
		Summary: "Submit a task", Tags: tags, DefaultStatus: http.StatusCreated, Errors: []int{409}}, Perm(auth.ResTasks, auth.ActWrite), a.createTask)
	Register(a, huma.Operation{OperationID: "list-tasks", Method: http.MethodGet, Path: Prefix + "/tasks",
		Summary: "List tasks (role user: own tasks only)", Tags: tags}, Perm(auth.ResTasks, auth.ActRead), a.listTasks)
	Register(a, huma.Operation{OperationID: "get-task", Method: http.MethodGet, Path: Prefix + "/tasks/{id}",
		Summary: "Get a task", Tags: tags}, Perm(auth.ResTasks, auth.ActRead), a.getTask)
	Register(a, huma.Operation{OperationID: "cancel-task", Metadata: Audited("task.cancel"), Method: http.MethodPost, Path: Prefix + "/tasks/{id}/cancel",
		Summary: "Cancel a task (owner, the tenant's admins or operator+; a tenant viewer: 403 tenant_read_only)", Tags: tags, Errors: []int{403, 404, 409}}, Perm(auth.ResTasks, auth.ActCancel), a.cancelTask)
	Register(a, huma.Operation{OperationID: "list-task-events", Method: http.MethodGet, Path: Prefix + "/tasks/{id}/events",
		Summary: "A task's state transitions", Tags: tags}, Perm(auth.ResTasks, auth.ActRead), a.taskEvents)
}

// ownOnly: role user sees and acts on its own tasks only; viewers observe
// everything read-only, operators and admins manage everything.
func ownOnly(p *auth.Principal) bool { return p.Role == controlplane.RoleUser }

func taskTarget(id int64) string { return "task/" + strconv.FormatInt(id, 10) }

func (a *API) createTask(ctx context.Context, in *createTaskIn) (*createTaskOut, error) {
	SetAudit(ctx, "task.create", "")
	p := PrincipalFrom(ctx)
	var key *controlplane.SubmitKey
	if in.IdempotencyKey != "" {
		key = &controlplane.SubmitKey{Key: in.IdempotencyKey, Hash: SubmitHash(in.Body)}
	}
	out, _, err := controlplane.SubmitOnce(key,
		func() (*createTaskOut, bool, error) { return a.replaySubmit(ctx, p, key) },
		func() (*createTaskOut, error) { return a.newTask(ctx, p, in.Body, key) })
	return out, err
}

// newTask admits and stores a submitted task.
func (a *API) newTask(ctx context.Context, p *auth.Principal, body TaskSpecJSON, key *controlplane.SubmitKey) (*createTaskOut, error) {
	spec := specDomain(body)
	// A task spends its tenant's quota: below operator, a caller submits
	// only into tenants it is a member of (tenancy.go).
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if err := a.admitTaskTenant(ctx, p, &spec); err != nil {
		return nil, err
	}
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if err := reservedLabels(p, spec.Labels); err != nil {
		return nil, err
	}
	if !body.WaitForNodes {
		if err := a.admitTask(ctx, spec); err != nil {
			return nil, err
		}
	}
	t := &controlplane.Task{Spec: spec, OwnerID: p.UserID, Owner: p.Username, SubmitKey: key}
	if err := a.store.CreateTask(ctx, t); err != nil {
		return nil, fmt.Errorf("create task: %w", err)
	}
	tracing.Tasks.Remember(ctx, t.ID) // its scheduling cycle continues this request's trace
	SetAudit(ctx, "task.create", taskTarget(t.ID))
	return &createTaskOut{Body: taskJSONFor(p, t)}, nil
}

// reservedLabels refuses labels HeteroFlow sets itself
// (controlplane.CheckUnreservedLabels) below operator; operators and
// admins may set them (a hub forwards with such a key).
func reservedLabels(p *auth.Principal, labels map[string]string) error {
	if p.ClusterWide() {
		return nil
	}
	return controlplane.CheckUnreservedLabels(labels)
}

// replaySubmit answers a submission whose Idempotency-Key the caller has
// used before: with the task it created when the request is the same, a
// coded conflict when it is not; found false when the key is new.
func (a *API) replaySubmit(ctx context.Context, p *auth.Principal, key *controlplane.SubmitKey) (*createTaskOut, bool, error) {
	t, hash, err := a.store.TaskBySubmitKey(ctx, p.UserID, key.Key)
	switch {
	case errors.Is(err, controlplane.ErrNotFound):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("idempotency key: %w", err)
	case hash != key.Hash:
		return nil, false, controlplane.KeyReused("task", "task", t.ID)
	}
	SetAudit(ctx, "task.create", taskTarget(t.ID))
	return &createTaskOut{Replayed: "true", Body: taskJSONFor(p, t)}, true, nil
}

// SubmitHash identifies a submission's request (a task spec, a workflow
// submission, a task for the hub to place): the SHA-256 of its body as
// decoded, so field order and spacing do not matter.
func SubmitHash[B TaskSpecJSON | WorkflowSubmitJSON | apitypes.HubTaskSubmitJSON](body B) string {
	b, err := json.Marshal(body)
	if err != nil {
		panic(fmt.Sprintf("submission does not encode: %v", err)) // a plain struct always does
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func parseTime(name, v string) (*time.Time, error) {
	if v == "" {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return nil, controlplane.Invalidf("%s must be an RFC 3339 time such as 2025-01-02T15:04:05Z, not %q", name, v)
	}
	return &t, nil
}

func (a *API) taskFilter(ctx context.Context, in *listTasksIn) (controlplane.TaskFilter, error) {
	f := controlplane.TaskFilter{Query: in.Q, Tenant: in.Tenant, Page: in.page()}
	for _, s := range splitList(in.State) {
		st := controlplane.TaskState(s)
		if !st.Valid() {
			return f, controlplane.Invalidf("unknown state %q", s)
		}
		f.States = append(f.States, st)
	}
	for _, kv := range splitList(in.Label) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return f, controlplane.Invalidf("label filter must be key=value, not %q", kv)
		}
		if f.Label == nil {
			f.Label = map[string]string{}
		}
		f.Label[k] = v
	}
	var err error
	if f.CreatedAfter, err = parseTime("since", in.Since); err != nil {
		return f, err
	}
	if f.CreatedBefore, err = parseTime("until", in.Until); err != nil {
		return f, err
	}
	p := PrincipalFrom(ctx)
	if !scopeTaskFilter(p, &f) {
		f.OwnerID = -1
		return f, nil
	}
	if f.Tenant != "" && p.Role != controlplane.RoleAgent {
		if _, err := scopeTenantFilter(p, f.Tenant); err != nil {
			return f, err
		}
	}
	switch {
	case in.Owner != "":
		if id, err := strconv.ParseInt(in.Owner, 10, 64); err == nil {
			f.OwnerID = id
			break
		}
		u, err := a.store.GetUserByName(ctx, in.Owner)
		if errors.Is(err, controlplane.ErrNotFound) {
			f.OwnerID = -1 // no such owner: an empty page, not an error
			break
		}
		if err != nil {
			return f, err
		}
		f.OwnerID = u.ID
	}
	return f, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func (a *API) listTasks(ctx context.Context, in *listTasksIn) (*Body[*List[TaskJSON]], error) {
	f, err := a.taskFilter(ctx, in)
	if err != nil {
		return nil, err
	}
	if f.OwnerID == -1 {
		return &Body[*List[TaskJSON]]{Body: &List[TaskJSON]{Items: []TaskJSON{}, Limit: f.Page.Limit, Offset: f.Page.Offset}}, nil
	}
	rows, total, err := a.store.ListTasks(ctx, f)
	if err != nil {
		return nil, err
	}
	p := PrincipalFrom(ctx)
	return &Body[*List[TaskJSON]]{Body: newList(rows, total, f.Page, func(t *controlplane.Task) TaskJSON { return taskJSONFor(p, t) })}, nil
}

// visibleTask loads a task the caller may see (task_access.go); others'
// tasks are "not found" so ids of other users' work are not confirmed.
func (a *API) visibleTask(ctx context.Context, id int64) (*controlplane.Task, error) {
	return LoadVisibleTask(ctx, a.store, id, false)
}

func (a *API) getTask(ctx context.Context, in *idIn) (*Body[TaskJSON], error) {
	t, err := a.visibleTask(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	return &Body[TaskJSON]{Body: taskJSONFor(PrincipalFrom(ctx), t)}, nil
}

func (a *API) cancelTask(ctx context.Context, in *cancelTaskIn) (*Body[TaskJSON], error) {
	SetAudit(ctx, "task.cancel", taskTarget(in.ID))
	reason := "cancelled by " + PrincipalFrom(ctx).Actor()
	if in.Body != nil && in.Body.Reason != "" {
		reason = in.Body.Reason
	}
	// The task may move (scheduler, agent) between our read and the
	// guarded transition; retry on a lost race, give up on a terminal state.
	for attempt := 0; attempt < 5; attempt++ {
		t, err := a.actionableTask(ctx, in.ID)
		if err != nil {
			return nil, err
		}
		if !controlplane.CanTransition(t.State, controlplane.TaskCancelled) {
			return nil, fmt.Errorf("%w: task %d is %s and cannot be cancelled", controlplane.ErrConflict, t.ID, t.State)
		}
		t, err = a.store.TransitionTask(ctx, controlplane.Transition{TaskID: t.ID, From: t.State,
			To: controlplane.TaskCancelled, Reason: reason, Actor: PrincipalFrom(ctx).Actor()})
		if errors.Is(err, controlplane.ErrConflict) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return &Body[TaskJSON]{Body: taskJSONFor(PrincipalFrom(ctx), t)}, nil
	}
	return nil, fmt.Errorf("%w: task %d keeps changing state; try again", controlplane.ErrConflict, in.ID)
}

// TaskEventsJSON lists a task's transitions.
type TaskEventsJSON struct {
	Items []TaskEventJSON `json:"items"`
}

func (a *API) taskEvents(ctx context.Context, in *idIn) (*Body[TaskEventsJSON], error) {
	if _, err := a.visibleTask(ctx, in.ID); err != nil {
		return nil, err
	}
	evs, err := a.store.ListTaskEvents(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	out := TaskEventsJSON{Items: make([]TaskEventJSON, 0, len(evs))}
	for _, e := range evs {
		out.Items = append(out.Items, TaskEventJSON{ID: e.ID, From: e.From, To: e.To, Reason: e.Reason, Actor: e.Actor, At: e.At})
	}
	return &Body[TaskEventsJSON]{Body: out}, nil
}
