package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

// Task submission uses group commit (storeutil.GroupCommit), like the SQLite
// store. With synchronous_commit on, every commit waits for a WAL flush to
// disk, which costs milliseconds on this class of machine whatever the
// transaction's size; so the CreateTask calls waiting at one moment (up to
// maxCreateBatch) are written by one statement — one round trip, one flush.
// A failed batch is retried one task per statement so that one bad task (an
// unknown owner, a value PostgreSQL rejects) fails only its own caller.
const maxCreateBatch = 256

// defaultCreateWorkers is two: while one batch waits for its WAL flush the
// next one forms and is sent, so the disk never idles between flushes. More
// workers only make batches smaller (more per-statement CPU on a small
// machine) without adding flush bandwidth: PostgreSQL already flushes the
// WAL of concurrent commits together.
const defaultCreateWorkers = 2

// createTasksSQL inserts a whole batch, given as one array per column, with
// the tasks' first events, in one atomic statement. IDs are drawn from the
// identity sequence in the numbered CTE n and inserted explicitly
// (OVERRIDING SYSTEM VALUE), so each input row's ID is known by its ordinal
// without relying on the order of RETURNING. n is read three times and calls
// a volatile function, so PostgreSQL evaluates it once.
const createTasksSQL = `WITH n AS (
	SELECT nextval(pg_get_serial_sequence('tasks', 'id')) AS id, u.ord, u.name, u.command, u.image, u.args,
		u.env, u.device_count, u.memory_mib, u.compute_percent, u.vendor, u.models, u.qos, u.priority,
		u.timeout_seconds, u.max_retries, u.labels, u.tenant, u.project, u.cpu_milli, u.host_memory_mib,
		u.rdma, u.gang, u.gang_size, NULLIF(u.owner_id, 0) AS owner_id,
		COALESCE(NULLIF(u.owner, ''), (SELECT username FROM users WHERE users.id = u.owner_id), '') AS owner,
		u.reason
	FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::int[], $8::int[],
		$9::text[], $10::text[], $11::text[], $12::int[], $13::int[], $14::int[], $15::text[], $16::text[],
		$17::text[], $18::int[], $19::int[], $20::bool[], $21::text[], $22::int[], $23::bigint[],
		$24::text[], $25::text[])
		WITH ORDINALITY AS u(name, command, image, args, env, device_count, memory_mib, compute_percent,
		vendor, models, qos, priority, timeout_seconds, max_retries, labels, tenant, project, cpu_milli,
		host_memory_mib, rdma, gang, gang_size, owner_id, owner, reason, ord)
), t AS (
	INSERT INTO tasks (id, name, command, image, args, env, device_count, memory_mib, compute_percent,
		vendor, models, qos, priority, timeout_seconds, max_retries, labels, tenant, project, cpu_milli,
		host_memory_mib, rdma, gang, gang_size, state, owner_id, owner, attempt, reason, created_at, updated_at)
	OVERRIDING SYSTEM VALUE
	SELECT id, name, command::jsonb, image, args::jsonb, env::jsonb, device_count, memory_mib,
		compute_percent, vendor, models::jsonb, qos, priority, timeout_seconds, max_retries, labels::jsonb,
		tenant, project, cpu_milli, host_memory_mib, rdma, gang, gang_size, 'submitted', owner_id, owner, 0,
		reason, $26, $26
	FROM n
	RETURNING id, owner, reason
), e AS (
	INSERT INTO task_events (task_id, from_state, to_state, reason, actor, at)
	SELECT id, '', 'submitted', reason, CASE WHEN owner = '' THEN 'system' ELSE owner END, $26 FROM t
)
SELECT ord, id, owner FROM n`

// CreateTask validates t.Spec, stores t in TaskSubmitted together with its
// first event, and sets ID, State, Owner and timestamps. A non-empty t.Owner
// is kept; otherwise the owner's username is looked up.
func (db *DB) CreateTask(ctx context.Context, t *controlplane.Task) error {
	n, err := storeutil.PrepareTask(t)
	if err != nil {
		return err
	}
	if err := db.creates.Do(ctx, n); err != nil {
		return fmt.Errorf("create task: %w", err)
	}
	return nil
}

// insertTasks is the GroupCommit write function: the whole batch in one
// statement. The callers' tasks are updated only after it succeeded.
func (db *DB) insertTasks(ctx context.Context, batch []storeutil.NewTask) error {
	now := db.now()
	rows, err := db.pool.Query(ctx, createTasksSQL, append(taskColumns(batch), now)...)
	if err != nil {
		return db.insertTasksErr(batch, err)
	}
	ids := make([]int64, len(batch))
	owners := make([]string, len(batch))
	seen := 0
	var ord, id int64
	var owner string
	_, err = pgx.ForEachRow(rows, []any{&ord, &id, &owner}, func() error {
		if ord < 1 || ord > int64(len(batch)) || ids[ord-1] != 0 {
			return fmt.Errorf("unexpected row ordinal %d", ord)
		}
		ids[ord-1], owners[ord-1] = id, owner
		seen++
		return nil
	})
	if err != nil {
		return db.insertTasksErr(batch, err)
	}
	if seen != len(batch) {
		return fmt.Errorf("inserted %d of %d tasks", seen, len(batch))
	}
	for i, n := range batch {
		n.Submitted(ids[i], owners[i], now)
	}
	return nil
}

// insertTasksErr names the missing owner when the batch is one task (the
// one-by-one retry of a failed batch comes here with the culprit alone).
func (db *DB) insertTasksErr(batch []storeutil.NewTask, err error) error {
	if isForeignKey(err) && len(batch) == 1 {
		return fmt.Errorf("task owner %d: %w", batch[0].Task.OwnerID, controlplane.ErrNotFound)
	}
	return mapErr(err)
}

// taskArrays holds a batch column by column, the shape createTasksSQL
// unnests.
type taskArrays struct {
	name, command, image, args, env, vendor, models, qos, labels, tenant, project, gang, owner, reason []string
	devices, memory, compute, priority, timeout, retries, cpu, hostMemory, gangSize                    []int
	rdma                                                                                               []bool
	ownerID                                                                                            []int64
}

// taskColumns turns the batch into the 25 column arrays of createTasksSQL,
// in parameter order.
func taskColumns(batch []storeutil.NewTask) []any {
	var a taskArrays
	for _, b := range batch {
		t, s, js := b.Task, &b.Task.Spec, b.JSON
		a.name, a.command, a.image = append(a.name, s.Name), append(a.command, js.Command), append(a.image, s.Image)
		a.args, a.env, a.vendor = append(a.args, js.Args), append(a.env, js.Env), append(a.vendor, s.Vendor)
		a.models, a.qos, a.labels = append(a.models, js.Models), append(a.qos, string(s.QoS)), append(a.labels, js.Labels)
		a.tenant, a.project, a.gang = append(a.tenant, s.Tenant), append(a.project, s.Project), append(a.gang, s.Gang)
		a.owner, a.reason, a.ownerID = append(a.owner, t.Owner), append(a.reason, t.Reason), append(a.ownerID, t.OwnerID)
		a.devices, a.memory = append(a.devices, s.DeviceCount), append(a.memory, s.MemoryMiB)
		a.compute, a.priority = append(a.compute, s.ComputePercent), append(a.priority, s.Priority)
		a.timeout, a.retries = append(a.timeout, s.TimeoutSeconds), append(a.retries, s.MaxRetries)
		a.cpu, a.hostMemory = append(a.cpu, s.CPUMilli), append(a.hostMemory, s.HostMemoryMiB)
		a.gangSize, a.rdma = append(a.gangSize, s.GangSize), append(a.rdma, s.RDMA)
	}
	return []any{a.name, a.command, a.image, a.args, a.env, a.devices, a.memory, a.compute, a.vendor, a.models,
		a.qos, a.priority, a.timeout, a.retries, a.labels, a.tenant, a.project, a.cpu, a.hostMemory, a.rdma,
		a.gang, a.gangSize, a.ownerID, a.owner, a.reason}
}
