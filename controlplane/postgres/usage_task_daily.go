package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

// addTaskDaily adds the inserted records to the per-task daily rollup that
// ranks a report's heaviest tasks, in one statement of the transaction that
// inserted them.
func addTaskDaily(ctx context.Context, tx pgx.Tx, inserted []*controlplane.UsageRecord) error {
	rows := storeutil.UsageTaskDailyDeltas(inserted)
	if len(rows) == 0 {
		return nil
	}
	var day, tenant, vendor, model, qos []string
	var task, dev, mem, comp []int64
	for _, d := range rows {
		day, tenant, vendor, model, qos = append(day, d.Day), append(tenant, d.Tenant), append(vendor, d.Vendor),
			append(model, d.Model), append(qos, d.QoS)
		task, dev, mem, comp = append(task, d.TaskID), append(dev, d.DeviceMilliMS), append(mem, d.MemoryMiBMS),
			append(comp, d.ComputeMilliMS)
	}
	_, err := tx.Exec(ctx, storeutil.UsageTaskDailyUpsert(`SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[],
		$4::text[], $5::text[], $6::text[], $7::bigint[], $8::bigint[], $9::bigint[])`),
		day, tenant, task, vendor, model, qos, dev, mem, comp)
	return mapErr(err)
}
