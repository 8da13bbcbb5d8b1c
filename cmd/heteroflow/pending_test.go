package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

// task why's first line: the reason after a dash only when there is one,
// and a task that is not pending says so.
func TestWhyHeadline(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		w    whyJSON
		want string
	}{
		{whyJSON{TaskID: 1, State: "running"}, "task / 任务 1: running (not waiting to be scheduled / 未在等待调度)\n"},
		{whyJSON{TaskID: 2, State: "queued", Pending: true, Reason: "no node fits"}, "task / 任务 2: queued — no node fits\n"},
		{whyJSON{TaskID: 3, State: "failed", Reason: "exit code 1"}, "task / 任务 3: failed — exit code 1 (not waiting to be scheduled / 未在等待调度)\n"},
	} {
		var out bytes.Buffer
		printWhy(&out, &tc.w)
		first, _, _ := bytes.Cut(out.Bytes(), []byte("\n"))
		require.Equal(t, tc.want, string(first)+"\n")
	}
}
