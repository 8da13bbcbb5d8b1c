package storetest

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
)

// RetentionStore is a store that prunes history.
type RetentionStore interface {
	FullStore
	controlplane.RetentionStore
}

// RetentionOpener returns a fresh, empty RetentionStore and registers its
// Close with t.Cleanup.
type RetentionOpener func(t *testing.T) RetentionStore

// RunRetention runs the conformance suite of controlplane.RetentionStore:
// age and size bounds, batch limits, exact accounting of what was removed,
// and nothing removed that a live task or an open alert still needs.
func RunRetention(t *testing.T, open RetentionOpener) {
	groups := []struct {
		name string
		run  func(t *testing.T, open RetentionOpener)
	}{
		{"RefusesNoLimit", testPruneNeedsLimit},
		{"AuditByAge", testPruneAuditByAge},
		{"AuditByRows", testPruneAuditByRows},
		{"TaskHistoryByAge", testPruneTaskHistoryByAge},
		{"TaskLogsByBytes", testPruneTaskLogsByBytes},
		{"TaskEventsByRows", testPruneTaskEventsByRows},
		{"SubmitKeys", testPruneSubmitKeys},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			g.run(t, open)
		})
	}
}

func testPruneNeedsLimit(t *testing.T, open RetentionOpener) {
	s := open(t)
	for name, f := range map[string]func(controlplane.PruneRule) (controlplane.Pruned, error){
		"audit": func(r controlplane.PruneRule) (controlplane.Pruned, error) { return s.PruneAudit(ctx(t), r) },
		"logs":  func(r controlplane.PruneRule) (controlplane.Pruned, error) { return s.PruneTaskLogs(ctx(t), r) },
		"events": func(r controlplane.PruneRule) (controlplane.Pruned, error) {
			return s.PruneTaskEvents(ctx(t), r)
		},
	} {
		_, err := f(controlplane.PruneRule{Before: time.Now(), MaxRows: 1, MaxBytes: 1})
		require.ErrorIs(t, err, controlplane.ErrInvalid, name)
	}
}

// liveAndDone is the fixture every case shares: a running task, a finished
// one, a failed one an open alert names, a failed one whose alert was
// resolved, and the open and resolved alerts themselves.
type liveAndDone struct {
	running, done, alerted, cleared *controlplane.Task
	openAlert, resolvedAlert        *controlplane.AlertInstance
}

func mkLiveAndDone(t *testing.T, s RetentionStore) liveAndDone {
	t.Helper()
	u := mkUser(t, s, fmt.Sprintf("ret-%d", uniq()), controlplane.RoleUser)
	var f liveAndDone
	f.running = move(t, s, mkTask(t, s, u.ID, nil).ID, controlplane.TaskQueued, controlplane.TaskScheduled, controlplane.TaskRunning)
	f.done = move(t, s, mkTask(t, s, u.ID, nil).ID, controlplane.TaskQueued, controlplane.TaskScheduled, controlplane.TaskRunning, controlplane.TaskSucceeded)
	f.alerted = move(t, s, mkTask(t, s, u.ID, nil).ID, controlplane.TaskQueued, controlplane.TaskScheduled, controlplane.TaskRunning, controlplane.TaskFailed)
	f.cleared = move(t, s, mkTask(t, s, u.ID, nil).ID, controlplane.TaskQueued, controlplane.TaskScheduled, controlplane.TaskRunning, controlplane.TaskFailed)
	at := time.Now().UTC().Truncate(time.Second)
	taskAlert := func(fp string, task *controlplane.Task) *controlplane.AlertInstance {
		a := mkAlert(fp, "TaskFailed", "", controlplane.AlertWarn, at)
		a.Labels["task_id"] = strconv.FormatInt(task.ID, 10)
		got, created, err := s.OpenAlert(ctx(t), a, nil)
		require.NoError(t, err)
		require.True(t, created)
		return got
	}
	f.openAlert = taskAlert(fmt.Sprintf("ret-open-%d", uniq()), f.alerted)
	f.resolvedAlert = taskAlert(fmt.Sprintf("ret-res-%d", uniq()), f.cleared)
	var err error
	f.resolvedAlert, err = s.ResolveAlert(ctx(t), f.resolvedAlert.ID, "", "cleared", at.Add(time.Minute), nil)
	require.NoError(t, err)
	return f
}

func auditBytes(e *controlplane.AuditEntry) int64 {
	return int64(len(e.Actor) + len(e.Module) + len(e.Level) + len(e.Action) + len(e.Target) + len(e.SourceIP) + len(e.Result) + len(e.Detail))
}

func appendAudit(t *testing.T, s RetentionStore, at time.Time, target string) *controlplane.AuditEntry {
	t.Helper()
	e := &controlplane.AuditEntry{At: at, Actor: "alice", Module: controlplane.ModuleAPI, Level: controlplane.LevelInfo,
		Action: "retention.test", Target: target, SourceIP: "10.0.0.1", Result: "ok", Detail: Hostile[4]}
	require.NoError(t, s.AppendAudit(ctx(t), e))
	return e
}

func auditTargets(t *testing.T, s RetentionStore) []string {
	t.Helper()
	list, total, err := s.ListAudit(ctx(t), controlplane.AuditFilter{Page: controlplane.Page{Limit: 1000}})
	require.NoError(t, err)
	require.Len(t, list, total)
	out := make([]string, 0, len(list))
	for _, e := range list {
		if e.Action == "retention.test" {
			out = append(out, e.Target)
		}
	}
	return out
}

func testPruneAuditByAge(t *testing.T, open RetentionOpener) {
	s := open(t)
	f := mkLiveAndDone(t, s)
	old := time.Now().UTC().Add(-48 * time.Hour).Truncate(time.Second)
	task := func(x *controlplane.Task) string { return fmt.Sprintf("task/%d", x.ID) }
	alert := func(x *controlplane.AlertInstance) string { return fmt.Sprintf("alert/%d", x.ID) }
	// Due: old and naming nothing open.
	var due []*controlplane.AuditEntry
	for _, target := range []string{"user/9", task(f.done), task(f.cleared), alert(f.resolvedAlert)} {
		due = append(due, appendAudit(t, s, old, target))
	}
	// Kept: old but needed, or recent.
	kept := []string{task(f.running), task(f.alerted), alert(f.openAlert), "user/10"}
	for _, target := range kept[:3] {
		appendAudit(t, s, old, target)
	}
	appendAudit(t, s, time.Now().UTC(), kept[3])

	rule := controlplane.PruneRule{Before: time.Now().UTC().Add(-time.Hour), Limit: 3}
	first, err := s.PruneAudit(ctx(t), rule)
	require.NoError(t, err)
	require.EqualValues(t, 3, first.Rows, "the limit bounds one call")
	second, err := s.PruneAudit(ctx(t), rule)
	require.NoError(t, err)
	require.EqualValues(t, 1, second.Rows)
	var wantBytes int64
	for _, e := range due {
		wantBytes += auditBytes(e)
	}
	require.Equal(t, wantBytes, first.Bytes+second.Bytes, "bytes are the entries' text, exactly")
	again, err := s.PruneAudit(ctx(t), rule)
	require.NoError(t, err)
	require.Zero(t, again.Rows, "nothing left to prune")
	require.ElementsMatch(t, kept, auditTargets(t, s))
}

func testPruneAuditByRows(t *testing.T, open RetentionOpener) {
	s := open(t)
	f := mkLiveAndDone(t, s)
	base := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	// The two oldest entries are needed; six more follow.
	appendAudit(t, s, base, fmt.Sprintf("task/%d", f.running.ID))
	appendAudit(t, s, base, fmt.Sprintf("alert/%d", f.openAlert.ID))
	for i := range 6 {
		appendAudit(t, s, base.Add(time.Duration(i+1)*time.Second), fmt.Sprintf("node/%d", i))
	}
	require.Len(t, auditTargets(t, s), 8)

	p, err := s.PruneAudit(ctx(t), controlplane.PruneRule{MaxRows: 5, Limit: 100})
	require.NoError(t, err)
	require.EqualValues(t, 3, p.Rows, "the oldest prunable entries go first")
	require.ElementsMatch(t, []string{fmt.Sprintf("task/%d", f.running.ID), fmt.Sprintf("alert/%d", f.openAlert.ID), "node/3", "node/4", "node/5"},
		auditTargets(t, s))

	// A bound below what is needed leaves the needed entries.
	_, err = s.PruneAudit(ctx(t), controlplane.PruneRule{MaxRows: 1, Limit: 1000})
	require.NoError(t, err)
	require.ElementsMatch(t, []string{fmt.Sprintf("task/%d", f.running.ID), fmt.Sprintf("alert/%d", f.openAlert.ID)}, auditTargets(t, s))
}

// writeLogs stores n chunks of size bytes on a task's stdout.
func writeLogs(t *testing.T, s RetentionStore, task *controlplane.Task, n, size int) {
	t.Helper()
	chunks := make([]*controlplane.TaskLogChunk, n)
	for i := range chunks {
		data := make([]byte, size)
		for j := range data {
			data[j] = byte('a' + (i+j)%26)
		}
		chunks[i] = &controlplane.TaskLogChunk{TaskID: task.ID, Attempt: task.Attempt, Stream: "stdout", Offset: int64(i * size), Data: data}
	}
	require.NoError(t, s.AppendTaskLogs(ctx(t), chunks))
}

func logBytes(t *testing.T, s RetentionStore, task *controlplane.Task) int {
	t.Helper()
	chunks, err := s.ReadTaskLogs(ctx(t), task.ID, task.Attempt, "stdout", 0, 1000)
	require.NoError(t, err)
	n := 0
	for _, c := range chunks {
		n += len(c.Data)
	}
	return n
}

func eventStats(t *testing.T, s RetentionStore, task *controlplane.Task) (rows, bytes int64) {
	t.Helper()
	evs, err := s.ListTaskEvents(ctx(t), task.ID)
	require.NoError(t, err)
	for _, e := range evs {
		bytes += int64(len(e.From) + len(e.To) + len(e.Reason) + len(e.Actor))
	}
	return int64(len(evs)), bytes
}

func testPruneTaskHistoryByAge(t *testing.T, open RetentionOpener) {
	s := open(t)
	f := mkLiveAndDone(t, s)
	all := []*controlplane.Task{f.running, f.done, f.alerted, f.cleared}
	for _, task := range all {
		writeLogs(t, s, task, 3, 100)
	}
	// Finished after the cutoff: nothing is due.
	early := controlplane.PruneRule{Before: time.Now().UTC().Add(-time.Hour), Limit: 100}
	p, err := s.PruneTaskLogs(ctx(t), early)
	require.NoError(t, err)
	require.Zero(t, p.Rows)
	p, err = s.PruneTaskEvents(ctx(t), early)
	require.NoError(t, err)
	require.Zero(t, p.Rows)

	var wantRows, wantBytes int64
	for _, task := range []*controlplane.Task{f.done, f.cleared} {
		r, b := eventStats(t, s, task)
		wantRows, wantBytes = wantRows+r, wantBytes+b
	}
	late := controlplane.PruneRule{Before: time.Now().UTC().Add(time.Hour), Limit: 100}
	p, err = s.PruneTaskEvents(ctx(t), late)
	require.NoError(t, err)
	require.Equal(t, controlplane.Pruned{Rows: wantRows, Bytes: wantBytes}, p)
	p, err = s.PruneTaskLogs(ctx(t), controlplane.PruneRule{Before: late.Before, Limit: 1})
	require.NoError(t, err)
	require.Equal(t, controlplane.Pruned{Rows: 3, Bytes: 300}, p, "Limit counts tasks: one task's three chunks")
	p, err = s.PruneTaskLogs(ctx(t), late)
	require.NoError(t, err)
	require.Equal(t, controlplane.Pruned{Rows: 3, Bytes: 300}, p)

	for _, task := range []*controlplane.Task{f.done, f.cleared} {
		require.Zero(t, logBytes(t, s, task), "task %d", task.ID)
		r, _ := eventStats(t, s, task)
		require.Zero(t, r, "task %d", task.ID)
	}
	for _, task := range []*controlplane.Task{f.running, f.alerted} {
		require.Equal(t, 300, logBytes(t, s, task), "a running task or one an open alert names keeps its logs")
		r, _ := eventStats(t, s, task)
		require.NotZero(t, r, "and its events")
	}
	got, err := s.GetTask(ctx(t), f.done.ID)
	require.NoError(t, err)
	require.Equal(t, controlplane.TaskSucceeded, got.State, "the task itself stays")
}

func testPruneTaskLogsByBytes(t *testing.T, open RetentionOpener) {
	s := open(t)
	f := mkLiveAndDone(t, s)
	u := mkUser(t, s, fmt.Sprintf("ret-b-%d", uniq()), controlplane.RoleUser)
	var finished []*controlplane.Task
	for range 3 {
		task := move(t, s, mkTask(t, s, u.ID, nil).ID, controlplane.TaskQueued, controlplane.TaskScheduled, controlplane.TaskRunning, controlplane.TaskSucceeded)
		writeLogs(t, s, task, 2, 50)
		finished = append(finished, task)
	}
	writeLogs(t, s, f.running, 2, 50)
	writeLogs(t, s, f.alerted, 2, 50)
	// 500 bytes stored, 300 allowed: the two oldest finished tasks go.
	p, err := s.PruneTaskLogs(ctx(t), controlplane.PruneRule{MaxBytes: 300, Limit: 100})
	require.NoError(t, err)
	require.Equal(t, controlplane.Pruned{Rows: 4, Bytes: 200}, p)
	require.Zero(t, logBytes(t, s, finished[0]))
	require.Zero(t, logBytes(t, s, finished[1]))
	require.Equal(t, 100, logBytes(t, s, finished[2]))

	// A bound below what is needed leaves the needed logs.
	p, err = s.PruneTaskLogs(ctx(t), controlplane.PruneRule{MaxBytes: 1, Limit: 100})
	require.NoError(t, err)
	require.Equal(t, controlplane.Pruned{Rows: 2, Bytes: 100}, p)
	require.Equal(t, 100, logBytes(t, s, f.running))
	require.Equal(t, 100, logBytes(t, s, f.alerted))
	p, err = s.PruneTaskLogs(ctx(t), controlplane.PruneRule{MaxBytes: 1, Limit: 100})
	require.NoError(t, err)
	require.Zero(t, p.Rows)
}

func testPruneTaskEventsByRows(t *testing.T, open RetentionOpener) {
	s := open(t)
	f := mkLiveAndDone(t, s)
	var total int64
	for _, task := range []*controlplane.Task{f.running, f.done, f.alerted, f.cleared} {
		r, _ := eventStats(t, s, task)
		total += r
	}
	doneRows, _ := eventStats(t, s, f.done)
	// Allow all but two rows: the two oldest prunable events (f.done's, the
	// oldest finished task after the running one) go.
	p, err := s.PruneTaskEvents(ctx(t), controlplane.PruneRule{MaxRows: total - 2, Limit: 100})
	require.NoError(t, err)
	require.EqualValues(t, 2, p.Rows)
	r, _ := eventStats(t, s, f.done)
	require.Equal(t, doneRows-2, r)

	_, err = s.PruneTaskEvents(ctx(t), controlplane.PruneRule{MaxRows: 1, Limit: 1000})
	require.NoError(t, err)
	for _, task := range []*controlplane.Task{f.done, f.cleared} {
		r, _ := eventStats(t, s, task)
		require.Zero(t, r)
	}
	for _, task := range []*controlplane.Task{f.running, f.alerted} {
		r, _ := eventStats(t, s, task)
		require.NotZero(t, r)
	}
}
