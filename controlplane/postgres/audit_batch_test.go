package postgres_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/postgres/pgtest"
)

func TestAppendAuditBatch(t *testing.T) {
	db := pgtest.Open(t)
	at := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	mk := func(n int, detail string) []*controlplane.AuditEntry {
		out := make([]*controlplane.AuditEntry, n)
		for i := range out {
			out[i] = &controlplane.AuditEntry{At: at.Add(time.Duration(i) * time.Second), Actor: fmt.Sprintf("u%d", i),
				Module: controlplane.ModuleAPI, Level: controlplane.LevelInfo, Action: "task.create",
				Target: fmt.Sprintf("task/%d", i), SourceIP: "10.0.0.1", Result: "ok", Detail: detail}
		}
		return out
	}

	t.Run("one statement stores all with their ids", func(t *testing.T) {
		entries := mk(300, "批量 <b>")
		require.NoError(t, db.AppendAuditBatch(t.Context(), entries))
		seen := map[int64]bool{}
		for _, e := range entries {
			require.NotZero(t, e.ID)
			require.False(t, seen[e.ID], "ids are distinct")
			seen[e.ID] = true
		}
		got, total, err := db.ListAudit(t.Context(), controlplane.AuditFilter{Page: controlplane.Page{Limit: 500}})
		require.NoError(t, err)
		require.Equal(t, len(entries), total)
		byID := map[int64]*controlplane.AuditEntry{}
		for _, g := range got {
			byID[g.ID] = g
		}
		for _, e := range entries {
			require.Equal(t, e, byID[e.ID], "each id maps to its own entry")
		}
	})

	t.Run("all or none", func(t *testing.T) {
		entries := mk(3, "ok")
		entries[1].Detail = "nul\x00byte" // PostgreSQL text cannot hold NUL
		require.ErrorIs(t, db.AppendAuditBatch(t.Context(), entries), controlplane.ErrInvalid)
		_, total, err := db.ListAudit(t.Context(), controlplane.AuditFilter{Query: "ok"})
		require.NoError(t, err)
		require.Zero(t, total)
		for _, e := range entries {
			require.Zero(t, e.ID, "ids are set only after the insert")
		}
	})

	t.Run("empty batch", func(t *testing.T) {
		require.NoError(t, db.AppendAuditBatch(t.Context(), nil))
	})
}
