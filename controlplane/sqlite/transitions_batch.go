package sqlite

import (
	"context"
	"database/sql"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

// TransitionTasks: see controlplane.SchedulingStore.
func (db *DB) TransitionTasks(ctx context.Context, trs []controlplane.Transition) ([]*controlplane.Task, error) {
	for _, tr := range trs {
		if err := storeutil.CheckTransition(tr); err != nil {
			return nil, err
		}
	}
	if len(trs) == 0 {
		return nil, nil
	}
	out := make([]*controlplane.Task, len(trs))
	err := db.write(ctx, func(tx *sql.Tx) error {
		for i, tr := range trs {
			t, err := db.transitionTx(ctx, tx, tr)
			if err != nil {
				return err
			}
			out[i] = t
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
