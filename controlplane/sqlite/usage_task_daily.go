package sqlite

import (
	"context"
	"database/sql"
	"slices"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

// addTaskDaily adds the inserted records to the per-task daily rollup that
// ranks a report's heaviest tasks, in the transaction that inserted them:
// one row per day, task, class and tenant of the batch (the rollup is
// append-only; the ranking sums a task's rows).
func addTaskDaily(ctx context.Context, tx *sql.Tx, inserted []*controlplane.UsageRecord) error {
	const cols = 9
	for batch := range slices.Chunk(storeutil.UsageTaskDailyDeltas(inserted), rollupRowsPerStatement) {
		args := make([]any, 0, cols*len(batch))
		for _, d := range batch {
			args = append(args, d.Day, d.Tenant, d.TaskID, d.Vendor, d.Model, d.QoS, d.DeviceMilliMS, d.MemoryMiBMS,
				d.ComputeMilliMS)
		}
		if _, err := tx.ExecContext(ctx, storeutil.UsageTaskDailyInsert(`VALUES `+placeholderRows(len(batch), cols)),
			args...); err != nil {
			return mapErr(err)
		}
	}
	return nil
}
