package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

func testBootstrapTokens(t *testing.T, open FullOpener) {
	s := open(t)
	first := mkToken(t, s)
	second := mkToken(t, s)

	got, err := s.GetBootstrapTokenByHash(ctx(t), first)
	require.NoError(t, err)
	require.Equal(t, first, got.TokenHash)
	require.Equal(t, "test", got.Description)
	require.Nil(t, got.UsedAt)
	require.False(t, got.CreatedAt.IsZero())

	list, total, err := s.ListBootstrapTokens(ctx(t), controlplane.Page{Limit: 10})
	require.NoError(t, err)
	require.Equal(t, 2, total)
	require.Equal(t, second, list[0].TokenHash, "newest first")

	dup := &controlplane.BootstrapToken{Prefix: "x", TokenHash: first, ExpiresAt: time.Now().Add(time.Hour)}
	require.ErrorIs(t, s.CreateBootstrapToken(ctx(t), dup), controlplane.ErrConflict)

	require.NoError(t, s.DeleteBootstrapToken(ctx(t), got.ID))
	require.ErrorIs(t, s.DeleteBootstrapToken(ctx(t), got.ID), controlplane.ErrNotFound)
	_, err = s.GetBootstrapTokenByHash(ctx(t), first)
	require.ErrorIs(t, err, controlplane.ErrNotFound)
}

func testEnroll(t *testing.T, open FullOpener) {
	s := open(t)
	err := s.EnrollNode(ctx(t), "no-such-hash", &controlplane.Node{ID: "n0", Hostname: "h"})
	require.ErrorIs(t, err, controlplane.ErrNotFound)

	n := mkNode(t, s, nil)
	got, err := s.GetNode(ctx(t), n.ID)
	require.NoError(t, err)
	require.Equal(t, controlplane.NodeOnline, got.State)
	require.Equal(t, map[string]string{"zone": "a"}, got.Labels)
	require.Equal(t, sampleInventory(), got.Inventory)
	require.JSONEq(t, `[]`, string(got.Running))
	require.Equal(t, n.APIKeyPrefix, got.APIKeyPrefix)
	require.NotNil(t, got.LastHeartbeat)
	require.Equal(t, n.CreatedAt, got.CreatedAt)

	// A used token enrolls nothing more.
	hash := mkToken(t, s)
	require.NoError(t, s.EnrollNode(ctx(t), hash, &controlplane.Node{ID: n.ID + "-b", Hostname: "b"}))
	tok, err := s.GetBootstrapTokenByHash(ctx(t), hash)
	require.NoError(t, err)
	require.NotNil(t, tok.UsedAt)
	require.Equal(t, n.ID+"-b", tok.NodeID)
	err = s.EnrollNode(ctx(t), hash, &controlplane.Node{ID: n.ID + "-c", Hostname: "c"})
	require.ErrorIs(t, err, controlplane.ErrConflict)

	// An expired token is refused.
	exp := &controlplane.BootstrapToken{Prefix: "exp", TokenHash: "expired-" + n.ID, ExpiresAt: time.Now().Add(-time.Minute)}
	require.NoError(t, s.CreateBootstrapToken(ctx(t), exp))
	err = s.EnrollNode(ctx(t), exp.TokenHash, &controlplane.Node{ID: n.ID + "-d", Hostname: "d"})
	require.ErrorIs(t, err, controlplane.ErrConflict)

	// A taken node id fails the whole enrollment: the token stays unused.
	fresh := mkToken(t, s)
	err = s.EnrollNode(ctx(t), fresh, &controlplane.Node{ID: n.ID, Hostname: "dup"})
	require.ErrorIs(t, err, controlplane.ErrConflict)
	tok, err = s.GetBootstrapTokenByHash(ctx(t), fresh)
	require.NoError(t, err)
	require.Nil(t, tok.UsedAt, "rolled back with the node insert")

	_, err = s.GetNode(ctx(t), "missing")
	require.ErrorIs(t, err, controlplane.ErrNotFound)
}

func testHeartbeats(t *testing.T, open FullOpener) {
	s := open(t)
	n := mkNode(t, s, nil)
	at := time.Now().Add(time.Second).UTC().Truncate(time.Microsecond)

	// No inventory: the stored one stays.
	got, err := s.RecordHeartbeat(ctx(t), n.ID, controlplane.NodeHeartbeat{At: at, Health: "ok", CPUCount: 32,
		MemoryTotalMiB: 1000, MemoryFreeMiB: 10, Running: json.RawMessage(`[{"task_id": 7, "attempt": 0}]`)})
	require.NoError(t, err)
	require.Equal(t, sampleInventory(), got.Inventory)
	require.Equal(t, "ok", got.Health)
	require.Equal(t, 32, got.CPUCount)
	require.Equal(t, int64(10), got.MemoryFreeMiB)
	require.JSONEq(t, `[{"task_id":7,"attempt":0}]`, string(got.Running))
	require.True(t, at.Equal(*got.LastHeartbeat))

	// A new inventory replaces it; a null running list is stored as [].
	inv := []inventory.Snapshot{{Vendor: "amd", Devices: []inventory.Device{{Index: 0, Model: "MI300X"}}}}
	got, err = s.RecordHeartbeat(ctx(t), n.ID, controlplane.NodeHeartbeat{At: at, Inventory: inv, Running: json.RawMessage("null")})
	require.NoError(t, err)
	require.Equal(t, inv, got.Inventory)
	require.JSONEq(t, `[]`, string(got.Running))
	listed, _, err := s.ListNodes(ctx(t), controlplane.NodeFilter{Query: n.ID, Page: controlplane.Page{Limit: 10}})
	require.NoError(t, err)
	require.Len(t, listed, 1)
	require.Equal(t, inv, listed[0].Inventory, "a read after the change sees the new devices")
	_, err = s.RecordHeartbeat(ctx(t), n.ID, controlplane.NodeHeartbeat{At: at, Inventory: sampleInventory()})
	require.NoError(t, err)
	got, err = s.GetNode(ctx(t), n.ID)
	require.NoError(t, err)
	require.Equal(t, sampleInventory(), got.Inventory, "and the change back")

	_, err = s.RecordHeartbeat(ctx(t), "missing", controlplane.NodeHeartbeat{At: at})
	require.ErrorIs(t, err, controlplane.ErrNotFound)

	// Silent nodes go offline once; a heartbeat brings them back.
	ids, err := s.MarkNodesOffline(ctx(t), at)
	require.NoError(t, err)
	require.Empty(t, ids, "heard from at the cutoff is not silent")
	ids, err = s.MarkNodesOffline(ctx(t), at.Add(time.Second))
	require.NoError(t, err)
	require.Equal(t, []string{n.ID}, ids)
	ids, err = s.MarkNodesOffline(ctx(t), at.Add(time.Second))
	require.NoError(t, err)
	require.Empty(t, ids)
	got, err = s.GetNode(ctx(t), n.ID)
	require.NoError(t, err)
	require.Equal(t, controlplane.NodeOffline, got.State)
	got, err = s.RecordHeartbeat(ctx(t), n.ID, controlplane.NodeHeartbeat{})
	require.NoError(t, err)
	require.Equal(t, controlplane.NodeOnline, got.State)

	got, err = s.SetNodeScheduling(ctx(t), n.ID, true, true)
	require.NoError(t, err)
	require.True(t, got.Cordoned)
	require.True(t, got.Draining)
	got, err = s.SetNodeScheduling(ctx(t), n.ID, false, false)
	require.NoError(t, err)
	require.False(t, got.Cordoned || got.Draining)
	_, err = s.SetNodeScheduling(ctx(t), "missing", true, false)
	require.ErrorIs(t, err, controlplane.ErrNotFound)
}

func testListNodes(t *testing.T, open FullOpener) {
	s := open(t)
	gpu := mkNode(t, s, func(n *controlplane.Node) { n.ID, n.Hostname = "alpha-1", "rack7-gpu" })
	npu := mkNode(t, s, func(n *controlplane.Node) {
		n.ID, n.Hostname = "beta-2", "rack8-npu"
		n.Inventory = []inventory.Snapshot{{Vendor: "ascend", Devices: []inventory.Device{{Index: 0, Model: "910B"}}}}
	})
	bare := mkNode(t, s, func(n *controlplane.Node) { n.ID, n.Hostname, n.Inventory = "gamma-3", "cpu-only", nil })
	_, err := s.MarkNodesOffline(ctx(t), time.Now().Add(time.Hour))
	require.NoError(t, err)
	_, err = s.RecordHeartbeat(ctx(t), gpu.ID, controlplane.NodeHeartbeat{})
	require.NoError(t, err)

	ids := func(f controlplane.NodeFilter) ([]string, int) {
		t.Helper()
		ns, total, err := s.ListNodes(ctx(t), f)
		require.NoError(t, err)
		out := []string{}
		for _, n := range ns {
			out = append(out, n.ID)
		}
		return out, total
	}
	cases := []struct {
		name  string
		f     controlplane.NodeFilter
		want  []string
		total int
	}{
		{"all by id", controlplane.NodeFilter{}, []string{gpu.ID, npu.ID, bare.ID}, 3},
		{"online", controlplane.NodeFilter{State: controlplane.NodeOnline}, []string{gpu.ID}, 1},
		{"offline", controlplane.NodeFilter{State: controlplane.NodeOffline}, []string{npu.ID, bare.ID}, 2},
		// alpha's ascend snapshot lists no devices, so only beta has Ascend.
		{"vendor with devices", controlplane.NodeFilter{Vendor: "ascend"}, []string{npu.ID}, 1},
		{"vendor nvidia", controlplane.NodeFilter{Vendor: "nvidia"}, []string{gpu.ID}, 1},
		{"vendor none", controlplane.NodeFilter{Vendor: "intel"}, []string{}, 0},
		{"query hostname", controlplane.NodeFilter{Query: "rack"}, []string{gpu.ID, npu.ID}, 2},
		{"query id", controlplane.NodeFilter{Query: "ma-3"}, []string{bare.ID}, 1},
		{"query is literal", controlplane.NodeFilter{Query: "%"}, []string{}, 0},
		{"page", controlplane.NodeFilter{Page: controlplane.Page{Limit: 1, Offset: 1}}, []string{npu.ID}, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, total := ids(c.f)
			require.Equal(t, c.want, got)
			require.Equal(t, c.total, total)
		})
	}
}
