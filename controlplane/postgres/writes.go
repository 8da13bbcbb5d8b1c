package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

// The hot write path — task submissions and the HTTP layer's audit batches —
// goes through one group commit (storeutil.GroupCommit). With
// synchronous_commit on, every commit waits for a WAL flush to disk, which
// costs milliseconds on this class of machine whatever the transaction's
// size, and PostgreSQL serialises the flushes. Writing the tasks and the
// audit entries waiting at one moment with ONE statement makes them share
// one round trip and one flush; separate statements would each wait for
// their own. Durability is unchanged: a caller returns only after the commit
// holding its write is flushed.
//
// A unit is what may fail alone: one task, or one audit batch (all or none).
// If the combined statement fails, each unit is retried by itself, so one
// bad task (an unknown owner, a value PostgreSQL rejects) fails only its own
// caller.
const maxWriteBatch = 256

// defaultWriteWorkers is two: while one batch waits for its WAL flush the
// next one forms and is sent. More workers only make batches smaller (more
// per-statement CPU on a small machine) without adding flush bandwidth.
const defaultWriteWorkers = 2

// writeUnit is one task or one audit batch.
type writeUnit struct {
	task  *storeutil.NewTask
	audit []*controlplane.AuditEntry
}

// writeBatchSQL is the task statement and the audit statement joined into
// one; a part whose arrays are empty inserts nothing. Each part draws its IDs
// from the identity sequence in a numbered CTE (n, a) and inserts them
// explicitly (OVERRIDING SYSTEM VALUE), so every input row's ID is known by
// its ordinal without relying on the order of RETURNING; n and a call a
// volatile function and are read more than once, so PostgreSQL evaluates
// each once.
const writeBatchSQL = `WITH ` + createTasksCTE + `, ` + appendAuditCTE + `
SELECT 't', ord, id, owner FROM n
UNION ALL
SELECT 'a', ord, id, '' FROM a`

// writeUnits is the GroupCommit write function: every unit in one
// statement. Callers' tasks and entries are updated only after it succeeded.
func (db *DB) writeUnits(ctx context.Context, units []writeUnit) error {
	now := db.now()
	var tasks []storeutil.NewTask
	var entries []*controlplane.AuditEntry
	for _, u := range units {
		if u.task != nil {
			tasks = append(tasks, *u.task)
		}
		entries = append(entries, u.audit...)
	}
	rows, err := db.pool.Query(ctx, writeBatchSQL, writeBatchParams(tasks, entries, now)...)
	if err != nil {
		return unitsErr(units, err)
	}
	taskIDs, owners := make([]int64, len(tasks)), make([]string, len(tasks))
	auditIDs := make([]int64, len(entries))
	seen := 0
	var kind, owner string
	var ord, id int64
	_, err = pgx.ForEachRow(rows, []any{&kind, &ord, &id, &owner}, func() error {
		ids := auditIDs
		if kind == "t" {
			ids = taskIDs
		}
		if ord < 1 || ord > int64(len(ids)) || ids[ord-1] != 0 {
			return fmt.Errorf("unexpected row %s/%d", kind, ord)
		}
		ids[ord-1] = id
		if kind == "t" {
			owners[ord-1] = owner
		}
		seen++
		return nil
	})
	if err != nil {
		return unitsErr(units, err)
	}
	if seen != len(tasks)+len(entries) {
		return fmt.Errorf("wrote %d of %d rows", seen, len(tasks)+len(entries))
	}
	for i, t := range tasks {
		t.Submitted(taskIDs[i], owners[i], now)
	}
	for i, e := range entries {
		e.ID = auditIDs[i]
	}
	return nil
}

// unitsErr names the missing owner when the batch is one task (the
// one-by-one retry of a failed batch comes here with the culprit alone).
func unitsErr(units []writeUnit, err error) error {
	if isForeignKey(err) && len(units) == 1 && units[0].task != nil {
		return fmt.Errorf("task owner %d: %w", units[0].task.Task.OwnerID, controlplane.ErrNotFound)
	}
	return mapErr(err)
}

// writeBatchParams are writeBatchSQL's parameters for tasks and entries.
func writeBatchParams(tasks []storeutil.NewTask, entries []*controlplane.AuditEntry, now time.Time) []any {
	params := append(taskColumns(tasks), now)
	params = append(params, auditColumns(entries)...)
	keys, hashes := submitKeyColumns(tasks)
	return append(params, secretColumn(tasks), bestEffortColumn(tasks), keys, hashes)
}
