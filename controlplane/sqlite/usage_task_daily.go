package sqlite

import (
	"context"
	"database/sql"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

// addTaskDaily adds the inserted records to the per-task daily rollup that
// ranks a report's heaviest tasks, in the transaction that inserted them.
func addTaskDaily(ctx context.Context, tx *sql.Tx, inserted []*controlplane.UsageRecord) error {
	rows := storeutil.UsageTaskDailyDeltas(inserted)
	if len(rows) == 0 {
		return nil
	}
	st, err := tx.PrepareContext(ctx, storeutil.UsageTaskDailyUpsert(`VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`))
	if err != nil {
		return mapErr(err)
	}
	defer st.Close()
	for _, d := range rows {
		if _, err := st.ExecContext(ctx, d.Day, d.Tenant, d.TaskID, d.Vendor, d.Model, d.QoS, d.DeviceMilliMS,
			d.MemoryMiBMS, d.ComputeMilliMS); err != nil {
			return mapErr(err)
		}
	}
	return nil
}
