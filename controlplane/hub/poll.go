package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/client"
)

// pollLease makes one server of an HA hub the poller.
const pollLease = "hub.poll"

// Run polls the members while this server holds the poller lease, until
// ctx ends (then the lease is given up).
func (h *Hub) Run(ctx context.Context) {
	// Renew well inside the lease; poll when the interval has passed.
	tick := min(h.cfg.LeaseTTL/3, h.cfg.PollInterval)
	t := time.NewTicker(tick)
	defer t.Stop()
	var last time.Time
	for {
		ok, err := h.store.AcquireLease(ctx, pollLease, h.holder, h.cfg.LeaseTTL)
		if err != nil && ctx.Err() == nil {
			h.log.Warn("hub poller lease", "err", err)
		}
		h.mu.Lock()
		h.leader = ok
		h.mu.Unlock()
		if ok && h.now().Sub(last) >= h.cfg.PollInterval {
			last = h.now()
			h.PollOnce(ctx)
		}
		select {
		case <-ctx.Done():
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
			_ = h.store.ReleaseLease(rctx, pollLease, h.holder)
			cancel()
			return
		case <-t.C:
		}
	}
}

// Leader reports whether this server polls the members.
func (h *Hub) Leader() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.leader
}

// PollOnce reads every member's summary (in parallel), stores it, and
// follows the tasks forwarded to it; a member that does not answer is
// marked unreachable and its unfinished tasks unknown, the others are
// served as usual.
func (h *Hub) PollOnce(ctx context.Context) {
	list, err := h.store.ListClusters(ctx)
	if err != nil {
		h.log.Warn("hub poll: list clusters", "err", err)
		return
	}
	var wg sync.WaitGroup
	for _, rec := range list {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h.pollMember(ctx, rec)
		}()
	}
	wg.Wait()
}

func (h *Hub) pollMember(ctx context.Context, rec *controlplane.MemberCluster) {
	cctx, cancel := context.WithTimeout(ctx, h.cfg.Timeout)
	defer cancel()
	c, err := h.client(rec)
	var st *memberState
	if err == nil {
		st, err = readState(cctx, c)
	}
	at := h.now().UTC()
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		h.memberDown(ctx, rec, err, at)
		return
	}
	body, _ := json.Marshal(&st.summary)
	version := rec.Version
	if hv, err := c.HealthAuthed(cctx); err == nil && hv.Version != "" {
		version = hv.Version
	}
	if err := h.store.RecordClusterPoll(ctx, rec.ID, controlplane.ClusterReachable, version, "", body, at); err != nil &&
		!errors.Is(err, controlplane.ErrNotFound) {
		h.log.Warn("hub poll: record", "cluster", rec.Name, "err", err)
	}
	h.follow(ctx, rec, c)
}

// memberDown records a failed poll and marks the member's unfinished
// forwarded tasks unknown.
func (h *Hub) memberDown(ctx context.Context, rec *controlplane.MemberCluster, cause error, at time.Time) {
	if err := h.store.RecordClusterPoll(ctx, rec.ID, controlplane.ClusterUnreachable, "", cause.Error(), nil, at); err != nil &&
		!errors.Is(err, controlplane.ErrNotFound) {
		h.log.Warn("hub poll: record", "cluster", rec.Name, "err", err)
	}
	n, err := h.store.MarkClusterTasksUnknown(ctx, rec.Name, "cluster "+rec.Name+" is unreachable: "+cause.Error())
	if err != nil {
		h.log.Warn("hub poll: mark tasks unknown", "cluster", rec.Name, "err", err)
		return
	}
	if rec.Status != controlplane.ClusterUnreachable {
		h.log.Warn("member cluster unreachable", "cluster", rec.Name, "err", cause, "tasks_unknown", n)
		h.audit(&controlplane.AuditEntry{Actor: "system", Module: controlplane.ModuleAPI, Level: controlplane.LevelWarn,
			Action: "cluster.unreachable", Target: "cluster/" + rec.Name, Result: "ok",
			Detail: fmt.Sprintf("%d forwarded tasks marked unknown: %v", n, cause)})
	}
}

// follow refreshes the unfinished tasks forwarded to a member that
// answered (tasks marked unknown while it was away included).
func (h *Hub) follow(ctx context.Context, rec *controlplane.MemberCluster, c *client.Client) {
	tasks, _, err := h.store.ListForwardedTasks(ctx, controlplane.ForwardedFilter{Cluster: rec.Name, Active: true,
		Page: controlplane.Page{Limit: controlplane.MaxPageLimit}})
	if err != nil {
		h.log.Warn("hub follow", "cluster", rec.Name, "err", err)
		return
	}
	for _, ft := range tasks {
		if ft.MemberTaskID == 0 {
			continue // the submission is still under way
		}
		cctx, cancel := context.WithTimeout(ctx, h.cfg.Timeout)
		_, _ = h.refresh(cctx, ft, c)
		cancel()
	}
}

// refresh reads the member's task and stores its state when it changed;
// it returns the member's task (nil when the member no longer has it).
func (h *Hub) refresh(ctx context.Context, ft *controlplane.ForwardedTask, c *client.Client) (*taskView, error) {
	t, err := c.GetTask(ctx, ft.MemberTaskID)
	var ae *client.Error
	switch {
	case errors.As(err, &ae) && ae.Status == http.StatusNotFound:
		reason := fmt.Sprintf("cluster %s no longer has task %d", ft.Cluster, ft.MemberTaskID)
		if ft.State != controlplane.ForwardedUnknown || ft.Reason != reason {
			ft.State, ft.Reason = controlplane.ForwardedUnknown, reason
			_ = h.store.UpdateForwardedTask(ctx, ft.ID, 0, ft.State, ft.Reason, nil)
		}
		return nil, nil
	case err != nil:
		return nil, err
	}
	state := controlplane.ForwardedState(t.State)
	if state != ft.State || t.Reason != ft.Reason {
		ft.State, ft.Reason, ft.FinishedAt = state, t.Reason, t.FinishedAt
		if err := h.store.UpdateForwardedTask(ctx, ft.ID, 0, state, t.Reason, t.FinishedAt); err != nil {
			h.log.Warn("hub follow: update", "task", ft.ID, "err", err)
		}
	}
	return &taskView{task: t}, nil
}
