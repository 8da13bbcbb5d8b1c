// Package schedulingapi is the REST face of the live scheduler: it decodes
// requests, checks who may see a task, calls the scheduling.Service's
// operations, writes the answers and documents every route in the OpenAPI
// document. The scheduling loop itself knows nothing of HTTP.
package schedulingapi

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/auth"
	"github.com/heteroflow/heteroflow/controlplane/httpapi"
	"github.com/heteroflow/heteroflow/controlplane/scheduling"
)

// handlers adapts one scheduling.Service to HTTP.
type handlers struct {
	s     *scheduling.Service
	store controlplane.Store
	log   *slog.Logger
}

// Mount registers the scheduler's routes on api and documents them (see
// docs/api-contract.md, "Scheduling"). store is the task store the why
// route reads, to apply the API's task-visibility policy.
func Mount(api *httpapi.API, s *scheduling.Service, store controlplane.Store) {
	h := &handlers{s: s, store: store, log: api.Logger()}
	p := httpapi.Prefix
	api.Handle(http.MethodGet, p+"/plugins", httpapi.Perm(auth.ResPlugins, auth.ActRead), http.HandlerFunc(h.listPlugins))
	api.Handle(http.MethodPatch, p+"/plugins/{name}", httpapi.Perm(auth.ResPlugins, auth.ActWrite), http.HandlerFunc(h.patchPlugin))
	api.Handle(http.MethodPut, p+"/plugins/order", httpapi.Perm(auth.ResPlugins, auth.ActWrite), http.HandlerFunc(h.putOrder))

	api.Handle(http.MethodGet, p+"/quotas", httpapi.Perm(auth.ResQuotas, auth.ActRead), http.HandlerFunc(h.listQuotas))
	api.Handle(http.MethodPost, p+"/quotas", httpapi.Perm(auth.ResQuotas, auth.ActWrite), http.HandlerFunc(h.createQuota))
	api.Handle(http.MethodGet, p+"/quotas/{id}", httpapi.Perm(auth.ResQuotas, auth.ActRead), http.HandlerFunc(h.getQuota))
	api.Handle(http.MethodPut, p+"/quotas/{id}", httpapi.Perm(auth.ResQuotas, auth.ActWrite), http.HandlerFunc(h.putQuota))
	api.Handle(http.MethodDelete, p+"/quotas/{id}", httpapi.Perm(auth.ResQuotas, auth.ActDelete), http.HandlerFunc(h.deleteQuota))

	api.Handle(http.MethodGet, p+"/tasks/{id}/why", httpapi.Perm(auth.ResTasks, auth.ActRead), http.HandlerFunc(h.why))
	api.Handle(http.MethodGet, p+"/scheduler/summary", httpapi.Perm(auth.ResNodes, auth.ActRead), http.HandlerFunc(h.summary))
	api.Handle(http.MethodGet, p+"/slices", httpapi.Perm(auth.ResNodes, auth.ActRead), http.HandlerFunc(h.slices))
	api.Handle(http.MethodGet, p+"/scheduler/defrag", httpapi.Perm(auth.ResNodes, auth.ActRead), http.HandlerFunc(h.defragPlan))
	api.Handle(http.MethodPost, p+"/scheduler/defrag", httpapi.Perm(auth.ResPlugins, auth.ActWrite), http.HandlerFunc(h.defragExecute))
	// A task no node can ever hold is refused at submit (400 never_fits)
	// unless it asks to wait for nodes.
	api.AddTaskAdmission(func(ctx context.Context, spec controlplane.TaskSpec) error {
		err := s.AdmitTask(ctx, spec)
		var nf *scheduling.NeverFitsError
		if errors.As(err, &nf) {
			return httpapi.CodedError(http.StatusBadRequest, scheduling.ErrCodeNeverFits, nf.Error())
		}
		return err
	})
	mountTenantQuotas(api, h)
	document(api)
}

// answer writes v as JSON with status, or the API's error for err.
func (h *handlers) answer(w http.ResponseWriter, r *http.Request, status int, v any, err error) {
	if err != nil {
		httpapi.WriteError(w, r, h.log, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// decode reads a JSON body strictly (unknown fields are an error).
func decode(r *http.Request, into any) error {
	dec := json.NewDecoder(io.LimitReader(r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		return controlplane.Invalidf("request body: %v", err)
	}
	return nil
}

func pathID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, controlplane.Invalidf("id must be a positive integer")
	}
	return id, nil
}

// ---- plugins ----

func (h *handlers) listPlugins(w http.ResponseWriter, r *http.Request) {
	out, err := h.s.Plugins(r.Context())
	h.answer(w, r, http.StatusOK, out, err)
}

func (h *handlers) patchPlugin(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	var body scheduling.PluginPatch
	if err := decode(r, &body); err != nil {
		h.answer(w, r, 0, nil, err)
		return
	}
	httpapi.SetAudit(r.Context(), "plugin.update", "plugin/"+name)
	out, err := h.s.PatchPlugin(r.Context(), name, body)
	h.answer(w, r, http.StatusOK, out, err)
}

type pluginOrder struct {
	Order []string `json:"order" doc:"Plugin names in evaluation order"`
}

func (h *handlers) putOrder(w http.ResponseWriter, r *http.Request) {
	var body pluginOrder
	if err := decode(r, &body); err != nil {
		h.answer(w, r, 0, nil, err)
		return
	}
	httpapi.SetAudit(r.Context(), "plugin.order", "plugins")
	out, err := h.s.SetPluginOrder(r.Context(), body.Order)
	h.answer(w, r, http.StatusOK, out, err)
}

// ---- quotas ----

// listQuotas lists the quotas of the caller's tenants (every quota for
// cluster-wide roles).
func (h *handlers) listQuotas(w http.ResponseWriter, r *http.Request) {
	out, err := h.s.Quotas(r.Context())
	h.answer(w, r, http.StatusOK, visibleQuotas(r.Context(), out), err)
}

func (h *handlers) createQuota(w http.ResponseWriter, r *http.Request) {
	var body scheduling.QuotaView
	if err := decode(r, &body); err != nil {
		h.answer(w, r, 0, nil, err)
		return
	}
	if err := h.validQuota(r.Context(), body); err != nil {
		h.answer(w, r, 0, nil, err)
		return
	}
	out, err := h.s.CreateQuota(r.Context(), body)
	if err == nil {
		httpapi.SetAudit(r.Context(), "quota.create", "quota/"+strconv.FormatInt(out.ID, 10))
	}
	h.answer(w, r, http.StatusCreated, out, err)
}

// validQuota checks a quota's own fields first (so malformed input is
// answered as such), then that its tenant and project exist.
func (h *handlers) validQuota(ctx context.Context, q scheduling.QuotaView) error {
	if err := q.Validate(); err != nil {
		return err
	}
	return h.quotaTargetExists(ctx, q)
}

func (h *handlers) getQuota(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r)
	if err != nil {
		h.answer(w, r, 0, nil, err)
		return
	}
	out, err := h.s.Quota(r.Context(), id)
	if p := httpapi.PrincipalFrom(r.Context()); err == nil && !p.ClusterWide() && p.MembershipOf(out.Tenant) == nil {
		err = controlplane.ErrNotFound // another tenant's quota
	}
	h.answer(w, r, http.StatusOK, out, err)
}

func (h *handlers) putQuota(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r)
	if err != nil {
		h.answer(w, r, 0, nil, err)
		return
	}
	var body scheduling.QuotaView
	if err := decode(r, &body); err != nil {
		h.answer(w, r, 0, nil, err)
		return
	}
	httpapi.SetAudit(r.Context(), "quota.update", "quota/"+strconv.FormatInt(id, 10))
	if _, err := h.s.Quota(r.Context(), id); err != nil { // a missing quota is a 404 before its body is judged
		h.answer(w, r, 0, nil, err)
		return
	}
	if err := h.validQuota(r.Context(), body); err != nil {
		h.answer(w, r, 0, nil, err)
		return
	}
	out, err := h.s.UpdateQuota(r.Context(), id, body)
	h.answer(w, r, http.StatusOK, out, err)
}

func (h *handlers) deleteQuota(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r)
	if err != nil {
		h.answer(w, r, 0, nil, err)
		return
	}
	httpapi.SetAudit(r.Context(), "quota.delete", "quota/"+strconv.FormatInt(id, 10))
	if err := h.s.DeleteQuota(r.Context(), id); err != nil {
		h.answer(w, r, 0, nil, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// ---- views ----

func (h *handlers) why(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r)
	if err != nil {
		h.answer(w, r, 0, nil, err)
		return
	}
	t, err := httpapi.LoadVisibleTask(r.Context(), h.store, id, false)
	if err != nil {
		h.answer(w, r, 0, nil, err)
		return
	}
	out, err := h.s.Why(r.Context(), t)
	h.answer(w, r, http.StatusOK, out, err)
}

func (h *handlers) summary(w http.ResponseWriter, r *http.Request) {
	out, err := h.s.Summary(r.Context())
	h.answer(w, r, http.StatusOK, out, err)
}

func (h *handlers) slices(w http.ResponseWriter, r *http.Request) {
	out, err := h.s.Slices(r.Context())
	h.answer(w, r, http.StatusOK, out, err)
}

func (h *handlers) defragPlan(w http.ResponseWriter, r *http.Request) {
	out, err := h.s.PlanDefrag(r.Context())
	h.answer(w, r, http.StatusOK, out, err)
}

type defragRequest struct {
	Execute bool `json:"execute" doc:"true requeues the plan's moves (needs --allow-defrag); false is a dry run"`
}

// defragExecute requeues the plan's moves with {"execute": true}; without
// execute it is a dry run answering the plan, as GET does.
func (h *handlers) defragExecute(w http.ResponseWriter, r *http.Request) {
	var body defragRequest
	if err := decode(r, &body); err != nil {
		h.answer(w, r, 0, nil, err)
		return
	}
	if !body.Execute {
		h.defragPlan(w, r)
		return
	}
	httpapi.SetAudit(r.Context(), "scheduler.defrag", "cluster")
	out, err := h.s.ExecuteDefrag(r.Context())
	h.answer(w, r, http.StatusOK, out, err)
}
