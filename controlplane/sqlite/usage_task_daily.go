package sqlite

import (
	"context"
	"database/sql"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

// addTaskDaily adds the inserted records to the per-task daily rollup that
// ranks a report's heaviest tasks, in the transaction that inserted them:
// one row per day, task, class and tenant of the batch (the rollup is
// append-only; the ranking sums a task's rows).
func addTaskDaily(ctx context.Context, tx *sql.Tx, inserted []*controlplane.UsageRecord) error {
	const cols = 9
	deltas := storeutil.UsageTaskDailyDeltas(inserted)
	return inRows(ctx, tx, len(deltas), cols, storeutil.UsageTaskDailyInsert, func(st *sql.Stmt, lo, hi int) error {
		args := make([]any, 0, cols*(hi-lo))
		for _, d := range deltas[lo:hi] {
			args = append(args, d.Day, d.Tenant, d.TaskID, d.Vendor, d.Model, d.QoS, d.DeviceMilliMS, d.MemoryMiBMS,
				d.ComputeMilliMS)
		}
		_, err := st.ExecContext(ctx, args...)
		return mapErr(err)
	})
}
