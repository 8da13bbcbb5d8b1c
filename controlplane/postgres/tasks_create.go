package postgres

import (
	"context"
	"fmt"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

// createTasksCTE inserts tasks, given as one array per column ($1–$25,
// the time in $26, secret_env in $36, allow_best_effort in $37 and the
// idempotency key and request hash in $38 and $39, after the audit CTE's arrays),
// with their first events; part of writeBatchSQL (writes.go). n numbers the
// rows and draws their IDs.
const createTasksCTE = `n AS (
	SELECT nextval(pg_get_serial_sequence('tasks', 'id')) AS id, u.ord, u.name, u.command, u.image, u.args,
		u.env, u.device_count, u.memory_mib, u.compute_percent, u.vendor, u.models, u.qos, u.priority,
		u.timeout_seconds, u.max_retries, u.labels, u.tenant, u.project, u.cpu_milli, u.host_memory_mib,
		u.rdma, u.gang, u.gang_size, NULLIF(u.owner_id, 0) AS owner_id,
		COALESCE(NULLIF(u.owner, ''), (SELECT username FROM users WHERE users.id = u.owner_id), '') AS owner,
		u.reason, u.secret_env, u.allow_best_effort, u.submit_key, u.submit_hash
	FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::int[], $8::int[],
		$9::text[], $10::text[], $11::text[], $12::int[], $13::int[], $14::int[], $15::text[], $16::text[],
		$17::text[], $18::int[], $19::int[], $20::bool[], $21::text[], $22::int[], $23::bigint[],
		$24::text[], $25::text[], $36::text[], $37::bool[], $38::text[], $39::text[])
		WITH ORDINALITY AS u(name, command, image, args, env, device_count, memory_mib, compute_percent,
		vendor, models, qos, priority, timeout_seconds, max_retries, labels, tenant, project, cpu_milli,
		host_memory_mib, rdma, gang, gang_size, owner_id, owner, reason, secret_env, allow_best_effort,
		submit_key, submit_hash, ord)
), t AS (
	INSERT INTO tasks (id, name, command, image, args, env, device_count, memory_mib, compute_percent,
		vendor, models, qos, priority, timeout_seconds, max_retries, labels, tenant, project, cpu_milli,
		host_memory_mib, rdma, gang, gang_size, state, owner_id, owner, attempt, reason, created_at, updated_at,
		secret_env, allow_best_effort, submit_key, submit_hash)
	OVERRIDING SYSTEM VALUE
	SELECT id, name, command::jsonb, image, args::jsonb, env::jsonb, device_count, memory_mib,
		compute_percent, vendor, models::jsonb, qos, priority, timeout_seconds, max_retries, labels::jsonb,
		tenant, project, cpu_milli, host_memory_mib, rdma, gang, gang_size, 'submitted', owner_id, owner, 0,
		reason, $26, $26, secret_env::jsonb, allow_best_effort, submit_key, submit_hash
	FROM n
	RETURNING id, owner, reason
), e AS (
	INSERT INTO task_events (task_id, from_state, to_state, reason, actor, at)
	SELECT id, '', 'submitted', reason, CASE WHEN owner = '' THEN 'system' ELSE owner END, $26 FROM t
)`

// CreateTask validates t.Spec, stores t in TaskSubmitted together with its
// first event, and sets ID, State, Owner and timestamps. A non-empty t.Owner
// is kept; otherwise the owner's username is looked up. Concurrent calls
// share one statement and one commit (writes.go).
func (db *DB) CreateTask(ctx context.Context, t *controlplane.Task) error {
	n, err := storeutil.PrepareTask(t)
	if err != nil {
		return err
	}
	if err := db.writes.Do(ctx, writeUnit{task: &n}); err != nil {
		return fmt.Errorf("create task: %w", err)
	}
	return nil
}

// taskArrays holds tasks column by column, the shape createTasksCTE
// unnests.
type taskArrays struct {
	name, command, image, args, env, vendor, models, qos, labels, tenant, project, gang, owner, reason []string
	devices, memory, compute, priority, timeout, retries, cpu, hostMemory, gangSize                    []int
	rdma                                                                                               []bool
	ownerID                                                                                            []int64
}

// taskColumns turns the tasks into the 25 column arrays of createTasksCTE,
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

// bestEffortColumn is createTasksCTE's $37: whether each Silver task
// allows an unenforced run.
func bestEffortColumn(batch []storeutil.NewTask) []bool {
	out := make([]bool, 0, len(batch))
	for _, b := range batch {
		out = append(out, b.Task.Spec.AllowBestEffort)
	}
	return out
}

// submitKeyColumns are createTasksCTE's $38 and $39: each task's
// idempotency key and request hash (NULL without one).
func submitKeyColumns(batch []storeutil.NewTask) (keys, hashes []*string) {
	for _, b := range batch {
		var k, h *string
		if sk := b.Task.SubmitKey; sk != nil {
			k, h = &sk.Key, &sk.Hash
		}
		keys, hashes = append(keys, k), append(hashes, h)
	}
	return keys, hashes
}

// secretColumn is createTasksCTE's $36: the tasks' secret environments,
// numbered after the audit arrays so the other parameters keep theirs.
func secretColumn(batch []storeutil.NewTask) []string {
	out := make([]string, 0, len(batch))
	for _, b := range batch {
		out = append(out, b.JSON.SecretEnv)
	}
	return out
}
