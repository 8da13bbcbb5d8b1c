package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/apitypes"
	"github.com/heteroflow/heteroflow/controlplane/client"
)

// Caller is who asks the hub for a forwarded task: the owner sees and
// cancels their own, SeeAll (admins, operators) every one. A tenant-scoped
// key (Tenant) sees only that tenant's, whoever owns it.
type Caller struct {
	ID     int64
	Name   string
	SeeAll bool
	Tenant string
}

// taskView is a member's task as the hub read it.
type taskView struct{ task *apitypes.TaskJSON }

// placement is the JSON record kept with a forwarded task.
type placement struct {
	Requested []string                    `json:"requested"`
	Scores    []apitypes.ClusterScoreJSON `json:"scores"`
}

// Submit places a task on the best member (in.Cluster "auto" or empty,
// optionally limited to in.Clusters) or on the one named, forwards it
// with an idempotency key and records it for following.
func (h *Hub) Submit(ctx context.Context, in apitypes.HubTaskSubmitJSON, who Caller) (*apitypes.HubTaskJSON, error) {
	out, _, err := h.SubmitOnce(ctx, in, who, nil)
	return out, err
}

// SubmitOnce is Submit made idempotent by the caller's key (nil: none;
// controlplane.SubmitOnce): a key the caller used before answers the task
// it placed then (replayed true) when the request is the same, and is a
// coded 409 when it is not or while that first submission is still being
// forwarded.
func (h *Hub) SubmitOnce(ctx context.Context, in apitypes.HubTaskSubmitJSON, who Caller, key *controlplane.SubmitKey) (*apitypes.HubTaskJSON, bool, error) {
	return controlplane.SubmitOnce(key,
		func() (*apitypes.HubTaskJSON, bool, error) { return h.replay(ctx, who, key) },
		func() (*apitypes.HubTaskJSON, error) { return h.submit(ctx, in, who, key) })
}

// replay answers a key the caller has used before; found false when it has not.
func (h *Hub) replay(ctx context.Context, who Caller, key *controlplane.SubmitKey) (*apitypes.HubTaskJSON, bool, error) {
	ft, hash, err := h.store.ForwardedTaskBySubmitKey(ctx, who.ID, key.Key)
	switch {
	case errors.Is(err, controlplane.ErrNotFound):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("idempotency key: %w", err)
	case hash != key.Hash:
		return nil, false, controlplane.KeyReused("hub_task", "hub task", ft.ID)
	case ft.State == controlplane.ForwardedForwarding:
		// The first request is still forwarding: its outcome (a member's
		// task, or nothing) is not known yet.
		return nil, false, controlplane.Coded(controlplane.ErrConflict, "idempotency_key_in_progress",
			[]string{"hub_task", strconv.FormatInt(ft.ID, 10)},
			"a submission with this Idempotency-Key is still being forwarded (hub task %d); retry shortly", ft.ID)
	}
	out, err := h.Task(ctx, ft.ID, who)
	return out, err == nil, err
}

func (h *Hub) submit(ctx context.Context, in apitypes.HubTaskSubmitJSON, who Caller, key *controlplane.SubmitKey) (*apitypes.HubTaskJSON, error) {
	names, err := h.requested(ctx, in)
	if err != nil {
		return nil, err
	}
	cands := h.readCandidates(ctx, names)
	scores := scoreAll(demandOf(in.Task), cands)
	best := scores[0]
	if best.Score < 0 {
		code, kind := CodeNoneFits, controlplane.ErrInvalid
		if !slices.ContainsFunc(scores, func(s apitypes.ClusterScoreJSON) bool { return !strings.HasPrefix(s.Reason, reasonUnreachable) }) {
			code, kind = CodeNoneAvailable, controlplane.ErrConflict
		}
		return nil, controlplane.Coded(kind, code, []string{"detail", describe(scores)},
			"no member cluster can take the task: %s", describe(scores))
	}
	rec, err := h.byName(ctx, best.Cluster)
	if err != nil {
		return nil, err
	}
	c, err := h.client(rec)
	if err != nil {
		return nil, err
	}
	pl, _ := json.Marshal(placement{Requested: names, Scores: scores})
	ft := &controlplane.ForwardedTask{Cluster: rec.Name, Name: in.Task.Name, OwnerID: who.ID, Owner: who.Name,
		Tenant: in.Task.Tenant, State: controlplane.ForwardedForwarding, Placement: pl, SubmitKey: key}
	if err := h.store.CreateForwardedTask(ctx, ft); err != nil {
		return nil, err
	}
	spec := in.Task
	if spec.Labels == nil {
		spec.Labels = map[string]string{}
	}
	// The member's task names where it came from.
	spec.Labels[controlplane.ReservedLabelPrefix+"hub/task"] = strconv.FormatInt(ft.ID, 10)
	spec.Labels[controlplane.ReservedLabelPrefix+"hub/owner"] = who.Name
	t, err := h.forward(ctx, c, spec, idempotencyKey(ft))
	if err != nil {
		// Nothing was created there (or the key makes a retry find it):
		// the record goes, the caller sees the member's reason.
		_ = h.store.DeleteForwardedTask(context.WithoutCancel(ctx), ft.ID)
		var ae *client.Error
		if errors.As(err, &ae) && ae.Status < 500 {
			return nil, controlplane.Coded(controlplane.ErrInvalid, CodeMemberRefused,
				[]string{"name", rec.Name, "code", ae.Code, "detail", ae.Message},
				"cluster %s refused the task: %s", rec.Name, ae.Message)
		}
		return nil, memberError(err, rec.Name, rec.URL)
	}
	ft.MemberTaskID, ft.State, ft.Reason = t.ID, controlplane.ForwardedState(t.State), t.Reason
	if err := h.store.UpdateForwardedTask(ctx, ft.ID, t.ID, ft.State, ft.Reason, t.FinishedAt); err != nil {
		return nil, err
	}
	return hubTaskJSON(ft, t), nil
}

// forwardAttempts bounds the retries of a forward whose answer was lost
// (no answer, or a 5xx): the same Idempotency-Key makes the member answer
// a retry with the task the first attempt created.
const forwardAttempts = 3

func (h *Hub) forward(ctx context.Context, c *client.Client, spec apitypes.TaskSpecJSON, key string) (*apitypes.TaskJSON, error) {
	for attempt := 1; ; attempt++ {
		t, err := c.SubmitTaskOnce(ctx, spec, key)
		var ae *client.Error
		lost := err != nil && (!errors.As(err, &ae) || ae.Status >= 500)
		if !lost || attempt == forwardAttempts || ctx.Err() != nil {
			return t, err
		}
		h.log.Warn("hub forward: retrying with the same idempotency key", "attempt", attempt, "err", err)
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(time.Duration(attempt) * 200 * time.Millisecond):
		}
	}
}

// idempotencyKey names one forwarded task: its id and creation time, so
// that two hubs forwarding to one member do not share keys.
func idempotencyKey(ft *controlplane.ForwardedTask) string {
	return "hub-" + strconv.FormatInt(ft.ID, 10) + "-" + strconv.FormatInt(ft.CreatedAt.UnixNano(), 36)
}

// requested lists the members a submission may go to.
func (h *Hub) requested(ctx context.Context, in apitypes.HubTaskSubmitJSON) ([]string, error) {
	list, err := h.store.ListClusters(ctx)
	if err != nil {
		return nil, err
	}
	known := make([]string, 0, len(list))
	for _, c := range list {
		known = append(known, c.Name)
	}
	var names []string
	switch {
	case in.Cluster != "" && in.Cluster != "auto":
		if len(in.Clusters) > 0 {
			return nil, controlplane.Invalidf("give cluster (one member, or auto) or clusters (a list), not both")
		}
		names = []string{in.Cluster}
	case len(in.Clusters) > 0:
		names = in.Clusters
	default:
		names = known
	}
	if len(names) == 0 {
		return nil, controlplane.Coded(controlplane.ErrConflict, CodeNoneAvailable, nil, "the hub has no member clusters; register one first")
	}
	for _, n := range names {
		if !slices.Contains(known, n) {
			return nil, controlplane.Coded(controlplane.ErrInvalid, CodeNotFound, []string{"name", n}, "cluster %s is not registered", n)
		}
	}
	return names, nil
}

// readCandidates reads the named members' summaries now, in parallel.
func (h *Hub) readCandidates(ctx context.Context, names []string) []candidate {
	out := make([]candidate, len(names))
	var wg sync.WaitGroup
	for i, n := range names {
		out[i].name = n
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec, err := h.byName(ctx, n)
			var c *client.Client
			if err == nil {
				c, err = h.client(rec)
			}
			if err == nil {
				cctx, cancel := context.WithTimeout(ctx, h.cfg.Timeout)
				out[i].state, err = readState(cctx, c)
				cancel()
			}
			out[i].err = err
		}()
	}
	wg.Wait()
	return out
}

func describe(scores []apitypes.ClusterScoreJSON) string {
	parts := make([]string, 0, len(scores))
	for _, s := range scores {
		parts = append(parts, s.Cluster+": "+s.Reason)
	}
	return strings.Join(parts, "; ")
}

// Tasks lists forwarded tasks (the caller's own unless SeeAll).
func (h *Hub) Tasks(ctx context.Context, who Caller, cluster string, p controlplane.Page) ([]apitypes.HubTaskJSON, int, error) {
	f := controlplane.ForwardedFilter{Cluster: cluster, Tenant: who.Tenant, Page: p}
	if !who.SeeAll {
		f.OwnerID = who.ID
	}
	list, total, err := h.store.ListForwardedTasks(ctx, f)
	if err != nil {
		return nil, 0, err
	}
	out := make([]apitypes.HubTaskJSON, 0, len(list))
	for _, ft := range list {
		out = append(out, *hubTaskJSON(ft, nil))
	}
	return out, total, nil
}

// visible loads a forwarded task the caller may see (404 otherwise, so
// ids of others' tasks are not confirmed).
func (h *Hub) visible(ctx context.Context, id int64, who Caller) (*controlplane.ForwardedTask, error) {
	ft, err := h.store.GetForwardedTask(ctx, id)
	if err == nil && (!who.SeeAll && ft.OwnerID != who.ID || who.Tenant != "" && ft.Tenant != who.Tenant) {
		err = controlplane.ErrNotFound
	}
	if errors.Is(err, controlplane.ErrNotFound) {
		return nil, fmt.Errorf("hub task %d: %w", id, controlplane.ErrNotFound)
	}
	return ft, err
}

// memberOf returns the dialed member a forwarded task lives on.
func (h *Hub) memberOf(ctx context.Context, ft *controlplane.ForwardedTask) (*controlplane.MemberCluster, *client.Client, error) {
	rec, err := h.byName(ctx, ft.Cluster)
	if err != nil {
		return nil, nil, controlplane.Coded(controlplane.ErrConflict, CodeNotFound, []string{"name", ft.Cluster},
			"cluster %s of this task is no longer registered", ft.Cluster)
	}
	c, err := h.client(rec)
	return rec, c, err
}

// Task is a forwarded task with its member's live view; when the member
// does not answer, the stored record with the state unknown.
func (h *Hub) Task(ctx context.Context, id int64, who Caller) (*apitypes.HubTaskJSON, error) {
	ft, err := h.visible(ctx, id, who)
	if err != nil {
		return nil, err
	}
	if ft.MemberTaskID == 0 {
		return hubTaskJSON(ft, nil), nil
	}
	rec, c, err := h.memberOf(ctx, ft)
	if err != nil {
		return hubTaskJSON(ft, nil), nil //nolint:nilerr // the record is the answer while the member is gone
	}
	cctx, cancel := context.WithTimeout(ctx, h.cfg.Timeout)
	defer cancel()
	v, err := h.refresh(cctx, ft, c)
	if err != nil {
		if !ft.State.Terminal() && ft.State != controlplane.ForwardedUnknown {
			ft.State, ft.Reason = controlplane.ForwardedUnknown, "cluster "+rec.Name+" is unreachable: "+err.Error()
			_ = h.store.UpdateForwardedTask(ctx, ft.ID, 0, ft.State, ft.Reason, nil)
		}
		return hubTaskJSON(ft, nil), nil
	}
	var t *apitypes.TaskJSON
	if v != nil {
		t = v.task
	}
	return hubTaskJSON(ft, t), nil
}

// Logs passes the member's log answer through (q: stream, attempt, offset).
func (h *Hub) Logs(ctx context.Context, id int64, who Caller, q url.Values) (json.RawMessage, error) {
	return h.pass(ctx, id, who, func(ctx context.Context, c *client.Client, mid int64) (json.RawMessage, error) {
		return c.TaskLogs(ctx, mid, q)
	})
}

// Why passes the member's why-pending answer through.
func (h *Hub) Why(ctx context.Context, id int64, who Caller) (json.RawMessage, error) {
	return h.pass(ctx, id, who, func(ctx context.Context, c *client.Client, mid int64) (json.RawMessage, error) {
		return c.TaskWhy(ctx, mid)
	})
}

func (h *Hub) pass(ctx context.Context, id int64, who Caller,
	call func(context.Context, *client.Client, int64) (json.RawMessage, error),
) (json.RawMessage, error) {
	ft, rec, c, err := h.reach(ctx, id, who)
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, h.cfg.Timeout)
	defer cancel()
	out, err := call(cctx, c, ft.MemberTaskID)
	if err != nil {
		return nil, h.memberCallError(err, rec)
	}
	return out, nil
}

// reach loads a forwarded task the caller may see that its member has
// accepted, with the member's dialed client.
func (h *Hub) reach(ctx context.Context, id int64, who Caller) (*controlplane.ForwardedTask, *controlplane.MemberCluster, *client.Client, error) {
	ft, err := h.visible(ctx, id, who)
	if err != nil {
		return nil, nil, nil, err
	}
	if ft.MemberTaskID == 0 {
		return nil, nil, nil, controlplane.Coded(controlplane.ErrConflict, CodeUnreachable, []string{"name", ft.Cluster},
			"the task has not reached cluster %s yet", ft.Cluster)
	}
	rec, c, err := h.memberOf(ctx, ft)
	if err != nil {
		return nil, nil, nil, err
	}
	return ft, rec, c, nil
}

// Cancel cancels the task on its member and records the new state.
func (h *Hub) Cancel(ctx context.Context, id int64, who Caller) (*apitypes.HubTaskJSON, error) {
	ft, rec, c, err := h.reach(ctx, id, who)
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, h.cfg.Timeout)
	defer cancel()
	t, err := c.CancelTask(cctx, ft.MemberTaskID)
	if err != nil {
		return nil, h.memberCallError(err, rec)
	}
	ft.State, ft.Reason, ft.FinishedAt = controlplane.ForwardedState(t.State), t.Reason, t.FinishedAt
	if err := h.store.UpdateForwardedTask(ctx, ft.ID, 0, ft.State, ft.Reason, ft.FinishedAt); err != nil {
		return nil, err
	}
	return hubTaskJSON(ft, t), nil
}

// memberCallError is a member's refusal as the hub's answer: its 4xx
// reasons keep their status, no answer is a conflict (retry later).
func (h *Hub) memberCallError(err error, rec *controlplane.MemberCluster) error {
	var ae *client.Error
	if errors.As(err, &ae) && ae.Status < 500 {
		kind := controlplane.ErrInvalid
		switch ae.Status {
		case http.StatusNotFound:
			kind = controlplane.ErrNotFound
		case http.StatusConflict:
			kind = controlplane.ErrConflict
		}
		return controlplane.Coded(kind, CodeMemberRefused, []string{"name", rec.Name, "code", ae.Code, "detail", ae.Message},
			"cluster %s: %s", rec.Name, ae.Message)
	}
	return controlplane.Coded(controlplane.ErrConflict, CodeUnreachable, []string{"name", rec.Name, "url", rec.URL, "detail", err.Error()},
		"cannot reach cluster %s at %s: %v", rec.Name, rec.URL, err)
}

func hubTaskJSON(ft *controlplane.ForwardedTask, t *apitypes.TaskJSON) *apitypes.HubTaskJSON {
	out := &apitypes.HubTaskJSON{ID: ft.ID, Cluster: ft.Cluster, MemberTaskID: ft.MemberTaskID, Name: ft.Name, Owner: ft.Owner,
		State: string(ft.State), Reason: ft.Reason, Task: t, CreatedAt: ft.CreatedAt, UpdatedAt: ft.UpdatedAt, FinishedAt: ft.FinishedAt}
	var pl placement
	if json.Unmarshal(ft.Placement, &pl) == nil {
		out.Scores = pl.Scores
	}
	return out
}
