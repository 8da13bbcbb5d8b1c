package runner

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/agent/agenttest"
	"github.com/heteroflow/heteroflow/agent/protocol"
)

func TestLogFileRotationAndCap(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l, err := OpenLog(dir, "stdout", 1000, 3)
	require.NoError(t, err)
	var all bytes.Buffer
	for i := 0; i < 100; i++ {
		line := bytes.Repeat([]byte{byte('a' + i%26)}, 95)
		line = append(line, '\n')
		all.Write(line)
		_, err := l.Write(line)
		require.NoError(t, err)
	}
	require.Equal(t, int64(9600), l.Size())
	require.NoError(t, l.Close())

	segs, err := segments(dir, "stdout")
	require.NoError(t, err)
	require.Equal(t, []int64{7000, 8000, 9000}, segs) // only the newest 3 segments stay
	var onDisk int64
	for _, s := range segs {
		st, err := os.Stat(filepath.Join(dir, "stdout."+pad(s)+".log"))
		require.NoError(t, err)
		onDisk += st.Size()
	}
	require.Equal(t, int64(2600), onDisk) // 1000 + 1000 + 600 ≤ cap 3000

	// Reading from 0 starts at the oldest byte kept and says so.
	data, start, next, err := ReadLog(dir, "stdout", 0, 1<<20)
	require.NoError(t, err)
	require.Equal(t, int64(7000), start)
	require.Equal(t, int64(9600), next)
	require.Equal(t, all.Bytes()[7000:], data)

	// Reading across a segment boundary, bounded by max.
	data, start, next, err = ReadLog(dir, "stdout", 7990, 20)
	require.NoError(t, err)
	require.Equal(t, int64(7990), start)
	require.Equal(t, int64(8010), next)
	require.Equal(t, all.Bytes()[7990:8010], data)

	// A reopened stream continues at the same offset.
	l2, err := OpenLog(dir, "stdout", 1000, 3)
	require.NoError(t, err)
	require.Equal(t, int64(9600), l2.Size())
	_, err = l2.Write([]byte("tail"))
	require.NoError(t, err)
	require.NoError(t, l2.Close())
	data, _, _, err = ReadLog(dir, "stdout", 9600, 10)
	require.NoError(t, err)
	require.Equal(t, "tail", string(data))
}

func TestOpenLogRejectsBadLimits(t *testing.T) {
	t.Parallel()
	_, err := OpenLog(t.TempDir(), "stdout", 0, 1)
	require.Error(t, err)
	_, err = OpenLog(t.TempDir(), "stdout", 10, 0)
	require.Error(t, err)
}

func TestTaskOutputIsCapped(t *testing.T) {
	skipUnlessUnix(t)
	t.Parallel()
	r := New(Config{LogDir: filepath.Join(agenttest.DataDir(t), "tasks"), LogSegmentBytes: 4096, LogSegments: 2, CLI: &recorder{}})
	// ~200 KB of output through the pipe.
	h, err := r.Start(context.Background(), protocol.TaskSpec{TaskID: 20,
		Command: []string{"sh", "-c", `i=0; while [ $i -lt 2000 ]; do echo "line $i padding padding padding padding padding padding padding padding"; i=$((i+1)); done`}})
	require.NoError(t, err)
	res := h.Wait()
	require.Equal(t, protocol.PhaseSucceeded, res.Phase)
	require.Greater(t, h.LogSize("stdout"), int64(100_000))
	var onDisk int64
	ents, err := os.ReadDir(h.LogDir())
	require.NoError(t, err)
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), "stdout.") && !strings.HasPrefix(e.Name(), "stderr.") {
			continue // the shim's exit record
		}
		info, err := e.Info()
		require.NoError(t, err)
		onDisk += info.Size()
	}
	require.LessOrEqual(t, onDisk, int64(2*4096))
	data, _, next, err := ReadLog(h.LogDir(), "stdout", 0, 1<<20)
	require.NoError(t, err)
	require.Equal(t, h.LogSize("stdout"), next)
	require.Contains(t, string(data), "line 1999 ")
}

func pad(n int64) string {
	s := []byte("00000000000000000000")
	for i := len(s) - 1; n > 0; i-- {
		s[i] = byte('0' + n%10)
		n /= 10
	}
	return string(s)
}
