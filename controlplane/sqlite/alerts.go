package sqlite

import "github.com/heteroflow/heteroflow/controlplane"

// The alert store's SQL is shared with PostgreSQL (storesql: alerts.go,
// alert_notify.go).
var (
	_ controlplane.AlertStore     = (*DB)(nil)
	_ controlplane.RetentionStore = (*DB)(nil) // through the shared queries
)
