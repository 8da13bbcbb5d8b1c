package plugins

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/scheduler/framework"
	"github.com/heteroflow/heteroflow/scheduler/model"
)

func TestGang(t *testing.T) {
	t.Parallel()
	cl := newCluster(t, gpuNode("n", 8000, "T4", 4))
	args, err := framework.ArgsFromYAML("timeout: 30s")
	require.NoError(t, err)
	pl, err := NewGang(args, nil)
	require.NoError(t, err)
	g := pl.(*Gang)
	now := time.Unix(0, 0)
	g.SetClock(func() time.Time { return now })
	ctx := context.Background()
	member := func(id, gang string) (*framework.Cycle, *model.Placement) {
		c := cycle(t, cl, &model.Request{ID: id, DeviceCount: 1, ComputePercent: 50, Gang: gang, GangSize: 3})
		return c, &model.Placement{TaskID: id, Node: "n"}
	}
	// Members 1 and 2 wait; the third completes the gang.
	for i, id := range []string{"m1", "m2"} {
		c, p := member(id, "g")
		require.True(t, g.Reserve(ctx, c, p).IsSuccess())
		st, left := g.Permit(ctx, c, p)
		require.Equal(t, framework.Wait, st.Code, "member %d", i)
		require.Equal(t, 30*time.Second, left)
	}
	r, size := g.Progress("g")
	require.Equal(t, []int{2, 3}, []int{r, size})
	// Unreserve of a member undoes its reservation.
	c2, p2 := member("m2", "g")
	g.Unreserve(ctx, c2, p2)
	require.Equal(t, []string{"m1"}, g.Members("g"))
	require.True(t, g.Reserve(ctx, c2, p2).IsSuccess())
	c3, p3 := member("m3", "g")
	require.True(t, g.Reserve(ctx, c3, p3).IsSuccess())
	st, _ := g.Permit(ctx, c3, p3)
	require.True(t, st.IsSuccess())
	require.Equal(t, []string{"m1", "m2", "m3"}, g.Members("g"))
	require.Empty(t, g.Expired(), "complete gangs never expire")
	g.Drop("g")

	// An incomplete gang expires after the timeout.
	c, p := member("x1", "h")
	require.True(t, g.Reserve(ctx, c, p).IsSuccess())
	now = now.Add(29 * time.Second)
	require.Empty(t, g.Expired())
	now = now.Add(time.Second)
	require.Equal(t, []string{"h"}, g.Expired())
	// A task outside any gang is never held.
	solo := cycle(t, cl, &model.Request{ID: "s", DeviceCount: 1, ComputePercent: 50})
	st, _ = g.Permit(ctx, solo, &model.Placement{TaskID: "s"})
	require.True(t, st.IsSuccess())
}
