package postgres

import (
	"github.com/jackc/pgx/v5"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storesql"
)

var _ controlplane.BillingStore = (*DB)(nil)

// intervalCols and scanInterval are the shared interval columns and scanner
// (storesql) for this store's metering queries.
const intervalCols = storesql.IntervalCols

func scanInterval(row pgx.Row) (*controlplane.AllocationInterval, error) {
	return storesql.ScanInterval(shared{}, pgRow{row})
}
