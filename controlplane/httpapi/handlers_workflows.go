package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/danielgtaylor/huma/v2"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/apitypes"
	"github.com/heteroflow/heteroflow/controlplane/auth"
	"github.com/heteroflow/heteroflow/controlplane/workflow"
)

// Workflows are DAGs of tasks: they carry the tasks' permissions (a user
// submits, sees and cancels their own; operators manage all).

// The workflow wire types live in controlplane/apitypes.
type (
	WorkflowSubmitJSON = apitypes.WorkflowSubmitJSON
	WorkflowJSON       = apitypes.WorkflowJSON
	WorkflowStepJSON   = apitypes.WorkflowStepJSON
	WorkflowEdgeJSON   = apitypes.WorkflowEdgeJSON
	WorkflowDetailJSON = apitypes.WorkflowDetailJSON
	WorkflowPlanJSON   = apitypes.WorkflowPlanJSON
	WorkflowEventsJSON = apitypes.WorkflowEventsJSON
	WorkflowEventJSON  = apitypes.WorkflowEventJSON
)

type listWorkflowsIn struct {
	PageParams
	State string `query:"state" doc:"Comma-separated states, e.g. running,failed"`
	Q     string `query:"q" maxLength:"256" doc:"Substring of the name"`
	Owner string `query:"owner" doc:"Owner username or id (ignored for role user: always self)"`
}

type retryWorkflowIn struct {
	ID   int64 `path:"id" minimum:"1"`
	Body *struct {
		From string `json:"from,omitempty" maxLength:"63" doc:"Also run this step and every step after it again"`
	} `required:"false"`
}

type cancelWorkflowIn struct {
	ID   int64 `path:"id" minimum:"1"`
	Body *struct {
		Reason string `json:"reason,omitempty" maxLength:"512"`
	} `required:"false"`
}

// workflowAPI holds the workflow routes' dependencies.
type workflowAPI struct {
	a    *API
	st   controlplane.WorkflowStore
	kick func()
}

// RegisterWorkflows mounts /api/v1/workflows on st; kick wakes the
// workflow engine after a change (nil: it notices on its next tick).
func (a *API) RegisterWorkflows(st controlplane.WorkflowStore, kick func()) {
	if kick == nil {
		kick = func() {}
	}
	h := &workflowAPI{a: a, st: st, kick: kick}
	tags := []string{"workflows"}
	p := Prefix + "/workflows"
	Register(a, huma.Operation{OperationID: "validate-workflow", Method: http.MethodPost, Path: p + "/validate",
		Summary: "Validate a workflow document and return its step instances and graph", Tags: tags},
		Perm(auth.ResTasks, auth.ActRead), h.validate)
	Register(a, huma.Operation{OperationID: "submit-workflow", Metadata: Audited("workflow.create"), Method: http.MethodPost, Path: p,
		Summary: "Submit a workflow (YAML or JSON document)", Tags: tags, DefaultStatus: http.StatusCreated, Errors: []int{409}},
		Perm(auth.ResTasks, auth.ActWrite), h.submit)
	Register(a, huma.Operation{OperationID: "list-workflows", Method: http.MethodGet, Path: p,
		Summary: "List workflows: what GET /workflows/{id} shows (role user: own only; viewers: their own and the tenants whose tasks they see)", Tags: tags}, Perm(auth.ResTasks, auth.ActRead), h.list)
	Register(a, huma.Operation{OperationID: "get-workflow", Method: http.MethodGet, Path: p + "/{id}",
		Summary: "A workflow with its steps and graph", Tags: tags}, Perm(auth.ResTasks, auth.ActRead), h.get)
	Register(a, huma.Operation{OperationID: "list-workflow-events", Method: http.MethodGet, Path: p + "/{id}/events",
		Summary: "A workflow's and its steps' state changes", Tags: tags}, Perm(auth.ResTasks, auth.ActRead), h.events)
	Register(a, huma.Operation{OperationID: "cancel-workflow", Metadata: Audited("workflow.cancel"), Method: http.MethodPost,
		Path: p + "/{id}/cancel", Summary: "Cancel a workflow (running steps are stopped; owner, the tenant's admins or operator+)", Tags: tags, Errors: []int{403, 404, 409}},
		Perm(auth.ResTasks, auth.ActCancel), h.cancel)
	Register(a, huma.Operation{OperationID: "retry-workflow", Metadata: Audited("workflow.retry"), Method: http.MethodPost,
		Path: p + "/{id}/retry", Summary: "Retry a failed or cancelled workflow from its failed steps (or from a named step; owner, the tenant's admins or operator+)",
		Tags: tags, Errors: []int{403, 404, 409}}, Perm(auth.ResTasks, auth.ActWrite), h.retry)
	Register(a, huma.Operation{OperationID: "resubmit-workflow", Metadata: Audited("workflow.resubmit"), Method: http.MethodPost,
		Path: p + "/{id}/resubmit", Summary: "Submit a workflow's spec again as a new workflow (owner, the tenant's admins or operator+; the tenant must admit the caller as for a submit)", Tags: tags,
		DefaultStatus: http.StatusCreated, Errors: []int{403, 404}}, Perm(auth.ResTasks, auth.ActWrite), h.resubmit)
}

func workflowTarget(id int64) string { return "workflow/" + strconv.FormatInt(id, 10) }

func workflowJSON(w *controlplane.Workflow) WorkflowJSON {
	return WorkflowJSON{ID: w.ID, Name: w.Name, State: w.State, OwnerID: w.OwnerID, Owner: w.Owner, Tenant: w.Tenant,
		Project: w.Project, Priority: w.Priority, Reason: w.Reason, Generation: w.Generation,
		ResubmittedFrom: w.ResubmittedFrom, CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt, StartedAt: w.StartedAt,
		FinishedAt: w.FinishedAt}
}

// graph lists a compiled workflow's instances (rows fill in their states)
// and edges: every instance of a step depends on every instance of each
// of its dependencies.
func graph(c *workflow.Compiled, w *controlplane.Workflow, rows []*controlplane.WorkflowStep) ([]WorkflowStepJSON, []WorkflowEdgeJSON) {
	byName := map[string]*controlplane.WorkflowStep{}
	for _, r := range rows {
		byName[r.Name] = r
	}
	steps := make([]WorkflowStepJSON, 0, len(c.Instances))
	of := map[string][]string{}
	for k, in := range c.Instances {
		st := c.Spec.Steps[in.Step].Name
		of[st] = append(of[st], in.Name)
		j := WorkflowStepJSON{Name: in.Name, Step: st, Index: in.Index, State: controlplane.StepPending,
			Artifacts: c.Artifacts(k, w)}
		if r := byName[in.Name]; r != nil {
			j.State, j.TaskID, j.TaskState, j.Generation = r.State, r.TaskID, r.TaskState, r.Generation
			j.ExitCode, j.Outputs, j.Reason, j.UpdatedAt = r.ExitCode, r.Outputs, r.Reason, r.UpdatedAt
			j.StartedAt, j.FinishedAt = r.StartedAt, r.FinishedAt
		}
		steps = append(steps, j)
	}
	edges := []WorkflowEdgeJSON{}
	for _, s := range c.Spec.Steps {
		for _, d := range s.Depends {
			for _, from := range of[d.Step] {
				for _, to := range of[s.Name] {
					edges = append(edges, WorkflowEdgeJSON{From: from, To: to, On: d.On})
				}
			}
		}
	}
	return steps, edges
}

func (h *workflowAPI) validate(ctx context.Context, in *struct{ Body WorkflowSubmitJSON }) (*Body[WorkflowPlanJSON], error) {
	s, err := workflow.Parse([]byte(in.Body.Document))
	if err != nil {
		return nil, err
	}
	c, err := workflow.Compile(s, in.Body.Params)
	if err != nil {
		return nil, err
	}
	steps, edges := graph(c, &controlplane.Workflow{Name: s.Name}, nil)
	return &Body[WorkflowPlanJSON]{Body: WorkflowPlanJSON{Name: s.Name, Steps: steps, Edges: edges}}, nil
}

type submitWorkflowIn struct {
	IdempotencyKey string `header:"Idempotency-Key" maxLength:"255" doc:"Makes the submission safe to retry: a second request with the same key from the same caller and the same body is answered with the workflow the first one created (header Idempotent-Replayed: true) instead of creating another; the same key with a different body is refused (409, code idempotency_key_reused). Keys are kept 24 hours; a task's key and a workflow's are separate."`
	Body           WorkflowSubmitJSON
}

type submitWorkflowOut struct {
	Replayed string `header:"Idempotent-Replayed" doc:"true when the workflow was created by an earlier request with the same Idempotency-Key"`
	Body     WorkflowDetailJSON
}

func (h *workflowAPI) submit(ctx context.Context, in *submitWorkflowIn) (*submitWorkflowOut, error) {
	p := PrincipalFrom(ctx)
	var key *controlplane.SubmitKey
	if in.IdempotencyKey != "" {
		key = &controlplane.SubmitKey{Key: in.IdempotencyKey, Hash: SubmitHash(in.Body)}
	}
	out, _, err := controlplane.SubmitOnce(key,
		func() (*submitWorkflowOut, bool, error) { return h.replaySubmit(ctx, p, key) },
		func() (*submitWorkflowOut, error) { return h.newWorkflow(ctx, p, in.Body, key) })
	return out, err
}

// newWorkflow admits and stores a submitted workflow, and wakes the engine.
func (h *workflowAPI) newWorkflow(ctx context.Context, p *auth.Principal, body WorkflowSubmitJSON, key *controlplane.SubmitKey) (*submitWorkflowOut, error) {
	// The workflow's tasks run in the caller's current tenant: it must
	// still admit the caller, as a task submitted there would.
	probe := controlplane.TaskSpec{}
	if err := h.a.admitTaskTenant(ctx, p, &probe); err != nil {
		return nil, err
	}
	// The tenant admitted, not the token's: a token issued before a tenant
	// switch names the tenant the caller left.
	w, _, err := workflow.Submit(ctx, h.st, workflow.Submission{Document: []byte(body.Document), Params: body.Params,
		OwnerID: p.UserID, Owner: p.Username, Tenant: probe.Tenant, SubmitKey: key})
	if err != nil {
		return nil, err
	}
	SetAudit(ctx, "workflow.create", workflowTarget(w.ID))
	h.kick()
	d, err := h.detail(ctx, w)
	if err != nil {
		return nil, err
	}
	return &submitWorkflowOut{Body: d.Body}, nil
}

// replaySubmit answers a submission whose Idempotency-Key the caller has
// used before: with the workflow it created when the request is the same,
// a coded conflict when it is not; found false when the key is new.
func (h *workflowAPI) replaySubmit(ctx context.Context, p *auth.Principal, key *controlplane.SubmitKey) (*submitWorkflowOut, bool, error) {
	w, hash, err := h.st.WorkflowBySubmitKey(ctx, p.UserID, key.Key)
	switch {
	case errors.Is(err, controlplane.ErrNotFound):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("idempotency key: %w", err)
	case hash != key.Hash:
		return nil, false, controlplane.KeyReused("workflow", "workflow", w.ID)
	}
	SetAudit(ctx, "workflow.create", workflowTarget(w.ID))
	d, err := h.detail(ctx, w)
	if err != nil {
		return nil, false, err
	}
	return &submitWorkflowOut{Replayed: "true", Body: d.Body}, true, nil
}

func (h *workflowAPI) detail(ctx context.Context, w *controlplane.Workflow) (*Body[WorkflowDetailJSON], error) {
	c, err := workflow.Load(w)
	if err != nil {
		return nil, err
	}
	rows, err := h.st.ListWorkflowSteps(ctx, w.ID)
	if err != nil {
		return nil, err
	}
	var spec map[string]any
	if err := json.Unmarshal(w.Spec, &spec); err != nil {
		return nil, fmt.Errorf("workflow %d spec: %w", w.ID, err)
	}
	if p := PrincipalFrom(ctx); p.Role != controlplane.RoleAdmin && p.Role != controlplane.RoleOperator && w.OwnerID != p.UserID {
		spec = nil // the spec holds the steps' env, which only owners and operators read
	}
	steps, edges := graph(c, w, rows)
	return &Body[WorkflowDetailJSON]{Body: WorkflowDetailJSON{WorkflowJSON: workflowJSON(w), Spec: spec, Steps: steps, Edges: edges}}, nil
}

// workflowVisible applies the tasks' visibility policy (task_access.go)
// to a workflow, as to a task of its owner and tenant that is placed
// nowhere: admins and operators see all, a user their own, a viewer their
// tenant's, agent keys none.
func workflowVisible(p *auth.Principal, w *controlplane.Workflow) bool {
	return TaskVisible(p, &controlplane.Task{OwnerID: w.OwnerID, Spec: controlplane.TaskSpec{Tenant: w.Tenant}})
}

// actionable loads a workflow the caller may act on (TaskActionable, as
// for a task of its owner and tenant): not found when the caller does not
// see it, tenant_read_only when it only sees it.
func (h *workflowAPI) actionable(ctx context.Context, id int64) (*controlplane.Workflow, error) {
	w, err := h.visible(ctx, id)
	if err != nil {
		return nil, err
	}
	if !TaskActionable(PrincipalFrom(ctx), &controlplane.Task{OwnerID: w.OwnerID, Spec: controlplane.TaskSpec{Tenant: w.Tenant}}) {
		return nil, readOnlyIn(w.Tenant, fmt.Sprintf("workflow %d", w.ID))
	}
	return w, nil
}

// visible loads a workflow the caller may see; others' are "not found".
func (h *workflowAPI) visible(ctx context.Context, id int64) (*controlplane.Workflow, error) {
	w, err := h.st.GetWorkflow(ctx, id)
	if err != nil {
		return nil, err
	}
	if !workflowVisible(PrincipalFrom(ctx), w) {
		return nil, fmt.Errorf("%w: workflow %d", controlplane.ErrNotFound, id)
	}
	return w, nil
}

func (h *workflowAPI) list(ctx context.Context, in *listWorkflowsIn) (*Body[*List[WorkflowJSON]], error) {
	f := controlplane.WorkflowFilter{Query: in.Q, Page: in.page()}
	for _, s := range splitList(in.State) {
		st := controlplane.WorkflowState(s)
		if !st.Valid() {
			return nil, controlplane.Invalidf("unknown workflow state %q", s)
		}
		f.States = append(f.States, st)
	}
	p := PrincipalFrom(ctx)
	if p.Role == controlplane.RoleAgent {
		return &Body[*List[WorkflowJSON]]{Body: &List[WorkflowJSON]{Items: []WorkflowJSON{}, Limit: f.Page.Limit, Offset: f.Page.Offset}}, nil
	}
	// The list holds what GET /workflows/{id} shows (workflowVisible):
	// below operator the caller's own and the tenants whose every task it
	// sees, a tenant-scoped key in its tenant only; a viewer in no tenant
	// lists nothing of others.
	if !p.ClusterWide() {
		if p.KeyTenant != "" {
			f.Tenant = p.KeyTenant
		}
		f.Scope = &controlplane.TaskScope{Tenants: p.TasksTenants(), OwnerID: p.UserID}
	}
	switch {
	case ownOnly(p):
		f.OwnerID = p.UserID
	case in.Owner != "":
		if id, err := strconv.ParseInt(in.Owner, 10, 64); err == nil {
			f.OwnerID = id
			break
		}
		u, err := h.a.store.GetUserByName(ctx, in.Owner)
		if err != nil {
			return nil, err
		}
		f.OwnerID = u.ID
	}
	rows, total, err := h.st.ListWorkflows(ctx, f)
	if err != nil {
		return nil, err
	}
	return &Body[*List[WorkflowJSON]]{Body: newList(rows, total, f.Page, workflowJSON)}, nil
}

func (h *workflowAPI) get(ctx context.Context, in *idIn) (*Body[WorkflowDetailJSON], error) {
	w, err := h.visible(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	return h.detail(ctx, w)
}

func (h *workflowAPI) events(ctx context.Context, in *idIn) (*Body[WorkflowEventsJSON], error) {
	if _, err := h.visible(ctx, in.ID); err != nil {
		return nil, err
	}
	evs, err := h.st.ListWorkflowEvents(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	out := WorkflowEventsJSON{Items: make([]WorkflowEventJSON, 0, len(evs))}
	for _, e := range evs {
		out.Items = append(out.Items, WorkflowEventJSON{ID: e.ID, Step: e.Step, From: e.From, To: e.To, Reason: e.Reason,
			Actor: e.Actor, At: e.At})
	}
	return &Body[WorkflowEventsJSON]{Body: out}, nil
}

func (h *workflowAPI) cancel(ctx context.Context, in *cancelWorkflowIn) (*Body[WorkflowDetailJSON], error) {
	SetAudit(ctx, "workflow.cancel", workflowTarget(in.ID))
	if _, err := h.actionable(ctx, in.ID); err != nil {
		return nil, err
	}
	actor := PrincipalFrom(ctx).Actor()
	reason := "cancelled by " + actor
	if in.Body != nil && in.Body.Reason != "" {
		reason = in.Body.Reason
	}
	w, err := workflow.Cancel(ctx, h.st, in.ID, actor, reason)
	if err != nil {
		return nil, err
	}
	h.kick()
	return h.detail(ctx, w)
}

func (h *workflowAPI) retry(ctx context.Context, in *retryWorkflowIn) (*Body[WorkflowDetailJSON], error) {
	SetAudit(ctx, "workflow.retry", workflowTarget(in.ID))
	if _, err := h.actionable(ctx, in.ID); err != nil {
		return nil, err
	}
	from := ""
	if in.Body != nil {
		from = in.Body.From
	}
	w, err := workflow.Retry(ctx, h.st, in.ID, from, PrincipalFrom(ctx).Actor())
	if err != nil {
		return nil, err
	}
	h.kick()
	return h.detail(ctx, w)
}

func (h *workflowAPI) resubmit(ctx context.Context, in *idIn) (*Body[WorkflowDetailJSON], error) {
	SetAudit(ctx, "workflow.resubmit", workflowTarget(in.ID))
	old, err := h.actionable(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	p := PrincipalFrom(ctx)
	if old.Tenant != "" {
		// The copy's tasks run in the original's tenant: it must still
		// admit the caller (a member, not a viewer), as a submit there would.
		probe := controlplane.TaskSpec{Tenant: old.Tenant}
		if err := h.a.admitTaskTenant(ctx, p, &probe); err != nil {
			return nil, err
		}
	}
	w, _, err := workflow.Submit(ctx, h.st, workflow.Submission{Document: old.Spec, OwnerID: p.UserID, Owner: p.Username,
		Tenant: old.Tenant, ResubmittedFrom: old.ID})
	if err != nil {
		return nil, err
	}
	SetAudit(ctx, "workflow.resubmit", workflowTarget(w.ID))
	h.kick()
	return h.detail(ctx, w)
}
