package postgres

import (
	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

// The external tests drive the group commit's write function through their
// own GroupCommit to control how batches form.

// WriteUnit is one task or one audit batch of the group commit.
type WriteUnit = writeUnit

// WriteUnits is the group commit's write function.
var WriteUnits = (*DB).writeUnits

// TaskUnit wraps one prepared task.
func TaskUnit(n storeutil.NewTask) WriteUnit { return writeUnit{task: &n} }

// AuditUnit wraps one audit batch.
func AuditUnit(entries []*controlplane.AuditEntry) WriteUnit { return writeUnit{audit: entries} }
