package sqlite

import (
	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storesql"
)

var _ controlplane.BillingStore = (*DB)(nil)

// intervalCols and scanInterval are the shared interval columns and scanner
// (storesql) for this store's metering queries.
const intervalCols = storesql.IntervalCols

func scanInterval(row rowScanner) (*controlplane.AllocationInterval, error) {
	return storesql.ScanInterval(shared{}, mappedRow{row})
}

// chunks yields s in slices of at most n (SQLite bounds a statement's
// parameters).
func chunks(s []int64, n int) func(func([]int64) bool) {
	return func(yield func([]int64) bool) {
		for len(s) > 0 {
			k := min(n, len(s))
			if !yield(s[:k]) {
				return
			}
			s = s[k:]
		}
	}
}
