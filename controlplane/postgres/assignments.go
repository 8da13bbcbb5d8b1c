package postgres

import (
	"github.com/heteroflow/heteroflow/controlplane"
)

var _ controlplane.NodeStore = (*DB)(nil)
