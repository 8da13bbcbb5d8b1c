package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

// Batched writes of the scheduler. A batch of placements is one transaction
// whose statements travel pipelined (pgx.Batch): one network round trip
// for the whole batch instead of one per statement, which is what bounds a
// bind when the server and PostgreSQL share a loaded machine. Rows that
// need the task's attempt take it from the task row the same transaction
// just updated, so nothing waits for an earlier statement's answer. The
// transitions return the columns they change; the specs come from the
// spec cache the scheduler's queue reads filled (storesql.FillSpecs).

const allocInsertPipelined = `INSERT INTO allocations (task_id, attempt, node_id, device_pos,
	device_index, device_uuid, vendor, model, memory_mib, compute_milli, qos, isolation, profile,
	part_start, cpu_milli, host_memory_mib, tenant, project, priority, draining, created_at)
	SELECT t.id, t.attempt, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, FALSE, $19
	FROM tasks t WHERE t.id = $1 RETURNING id`

const assignInsertPipelined = `INSERT INTO assignments (node_id, kind, task_id, attempt, payload, created_at)
	SELECT $1, $2, t.id, t.attempt, $4::jsonb, $5 FROM tasks t WHERE t.id = $3 RETURNING id`

func queueTransition(b *pgx.Batch, tr controlplane.Transition, now time.Time) {
	b.Queue(transitionStateSQL, transitionArgs(tr, now)...)
}

// bindTasksPipelined is BindTasks for more than one binding.
func (db *DB) bindTasksPipelined(ctx context.Context, bs []controlplane.Binding) ([]*controlplane.Task, error) {
	for _, b := range bs {
		if err := storeutil.CheckTransition(b.Transition); err != nil {
			return nil, err
		}
	}
	now := db.now()
	out := make([]*controlplane.Task, len(bs))
	err := db.tx(ctx, func(tx pgx.Tx) error {
		batch := &pgx.Batch{}
		for _, b := range bs {
			queueTransition(batch, b.Transition, now)
			for _, a := range b.Allocations {
				batch.Queue(allocInsertPipelined, b.Transition.TaskID, a.NodeID, a.DevicePos, a.DeviceIndex, a.DeviceUUID,
					a.Vendor, a.Model, a.MemoryMiB, a.ComputeMilli, string(a.QoS), a.Isolation, a.Profile, a.PartStart,
					a.CPUMilli, a.HostMemoryMiB, a.Tenant, a.Project, a.Priority, now)
			}
			if as := b.Assignment; as != nil {
				batch.Queue(assignInsertPipelined, as.NodeID, as.Kind, b.Transition.TaskID, storeutil.PayloadJSON(as.Payload), now)
			}
		}
		br := tx.SendBatch(ctx, batch)
		guard, err := readBindResults(br, bs, out, now)
		if cerr := br.Close(); err == nil && guard < 0 && cerr != nil {
			err = mapErr(cerr)
		}
		if err == nil && guard >= 0 {
			err = guardFailed(guard)
		}
		return err
	})
	var g guardFailed
	if errors.As(err, &g) {
		// The statements queued after the failed guard may have aborted
		// the transaction: explain it from a fresh read.
		return nil, db.transitionGuardError(ctx, bs[g].Transition)
	}
	if err != nil {
		return nil, err
	}
	return out, db.FillSpecs(ctx, out)
}

// guardFailed is the index of the first transition whose guard failed in a
// pipelined batch (the transaction is rolled back).
type guardFailed int

func (g guardFailed) Error() string { return "transition guard failed" }

// readBindResults reads the pipelined answers in order; guard is the index
// of the first binding whose transition guard failed (-1: none).
func readBindResults(br pgx.BatchResults, bs []controlplane.Binding, out []*controlplane.Task, now time.Time) (guard int, err error) {
	for i, b := range bs {
		t, err := scanTaskState(br.QueryRow())
		if errors.Is(err, controlplane.ErrNotFound) {
			return i, nil
		}
		if err != nil {
			return -1, fmt.Errorf("transition task %d: %w", b.Transition.TaskID, err)
		}
		out[i] = t
		for _, a := range b.Allocations {
			a.TaskID, a.Attempt, a.CreatedAt = t.ID, t.Attempt, now
			if err := br.QueryRow().Scan(&a.ID); err != nil {
				return -1, fmt.Errorf("insert allocation of task %d: %w", t.ID, mapErr(err))
			}
		}
		if as := b.Assignment; as != nil {
			as.CreatedAt, as.Attempt = now, t.Attempt
			if err := br.QueryRow().Scan(&as.ID); err != nil {
				return -1, fmt.Errorf("insert assignment: %w", mapErr(err))
			}
		}
	}
	return -1, nil
}

// TransitionTasks: see controlplane.SchedulingStore. The transitions travel
// pipelined in one transaction.
func (db *DB) TransitionTasks(ctx context.Context, trs []controlplane.Transition) ([]*controlplane.Task, error) {
	for _, tr := range trs {
		if err := storeutil.CheckTransition(tr); err != nil {
			return nil, err
		}
	}
	if len(trs) == 0 {
		return nil, nil
	}
	now := db.now()
	out := make([]*controlplane.Task, len(trs))
	err := db.tx(ctx, func(tx pgx.Tx) error {
		batch := &pgx.Batch{}
		for _, tr := range trs {
			queueTransition(batch, tr, now)
		}
		br := tx.SendBatch(ctx, batch)
		guard := -1
		var err error
		for i, tr := range trs {
			t, serr := scanTaskState(br.QueryRow())
			if errors.Is(serr, controlplane.ErrNotFound) {
				guard = i
				break
			}
			if serr != nil {
				err = fmt.Errorf("transition task %d: %w", tr.TaskID, serr)
				break
			}
			out[i] = t
		}
		if cerr := br.Close(); err == nil && guard < 0 && cerr != nil {
			err = mapErr(cerr)
		}
		if err == nil && guard >= 0 {
			err = guardFailed(guard)
		}
		return err
	})
	var g guardFailed
	if errors.As(err, &g) {
		return nil, db.transitionGuardError(ctx, trs[g])
	}
	if err != nil {
		return nil, err
	}
	return out, db.FillSpecs(ctx, out)
}

// BindTasks is the shared BindTasks for one binding; a batch travels
// pipelined (bindTasksPipelined).
func (db *DB) BindTasks(ctx context.Context, bs []controlplane.Binding) ([]*controlplane.Task, error) {
	if len(bs) > 1 {
		return db.bindTasksPipelined(ctx, bs)
	}
	return db.Queries.BindTasks(ctx, bs)
}
