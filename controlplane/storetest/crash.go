package storetest

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
)

// CrashEnv switches a test binary into the crash child: instead of running
// tests it writes to the store until it is killed.
const CrashEnv = "HETEROFLOW_CRASH_CHILD"

// IsCrashChild reports whether this process is a crash child.
func IsCrashChild() bool { return os.Getenv(CrashEnv) == "1" }

const (
	crashWorkers    = 4
	crashRounds     = 3
	crashAckedFirst = 300 // acknowledged writes before the kill is armed
)

// CrashChild opens the store and writes a burst of CreateTask and
// TransitionTask calls from several goroutines until killed. After each call
// returns successfully it prints an acknowledgement line to stdout with a
// direct write, so the parent learns about every committed write.
func CrashChild(open func(ctx context.Context) (controlplane.Store, error)) {
	ctx := context.Background()
	s, err := open(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "crash child: open:", err)
		os.Exit(2)
	}
	var mu sync.Mutex
	ack := func(format string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		_, _ = fmt.Fprintf(os.Stdout, "ACK "+format+"\n", a...)
	}
	var wg sync.WaitGroup
	for w := range crashWorkers {
		wg.Go(func() {
			for i := 0; ; i++ {
				task := &controlplane.Task{Spec: MinimalSpec(fmt.Sprintf("crash-%d-%d-%d", os.Getpid(), w, i))}
				task.Spec.MaxRetries = 2
				if err := s.CreateTask(ctx, task); err != nil {
					fmt.Fprintln(os.Stderr, "crash child: create:", err)
					os.Exit(3)
				}
				ack("create %d", task.ID)
				walk(ctx, s, task, ack)
			}
		})
	}
	wg.Wait()
}

// walk moves a task along random legal transitions until it rests in a
// terminal state (retrying failed runs while retries remain).
func walk(ctx context.Context, s controlplane.Store, t *controlplane.Task, ack func(string, ...any)) {
	for {
		next := nextStates(t.State)
		if len(next) == 0 || (t.State.Terminal() && (t.State == controlplane.TaskSucceeded ||
			t.State == controlplane.TaskCancelled || t.Attempt >= t.Spec.MaxRetries)) {
			return
		}
		tr := controlplane.Transition{TaskID: t.ID, From: t.State, To: next[rand.IntN(len(next))], Actor: "crash"}
		tr.Retry = t.State.Terminal()
		if tr.To == controlplane.TaskRunning {
			tr.NodeID = ptr("node-" + strconv.Itoa(rand.IntN(8)))
		}
		got, err := s.TransitionTask(ctx, tr)
		if err != nil {
			fmt.Fprintln(os.Stderr, "crash child: transition:", err)
			os.Exit(4)
		}
		ack("move %d %s %s", t.ID, tr.From, tr.To)
		t = got
	}
}

// nextStates lists the legal successors of s from the one transition table.
func nextStates(s controlplane.TaskState) []controlplane.TaskState {
	var out []controlplane.TaskState
	for _, to := range controlplane.AllTaskStates {
		if controlplane.CanTransition(s, to) {
			out = append(out, to)
		}
	}
	return out
}

// CrashTest runs the parent side: crashRounds times it starts this test
// binary as a crash child (running only testName, with env added), waits for
// a few hundred acknowledged writes, kills the child with SIGKILL mid-burst,
// reopens the store with reopen and checks it is consistent and holds every
// acknowledged write.
func CrashTest(t *testing.T, testName string, env []string, reopen Opener) {
	acked := map[int64]int{} // task → acknowledged events (including submitted)
	for round := range crashRounds {
		crashOnce(t, testName, env, acked)
		s := reopen(t)
		checkConsistent(t, s, acked)
		require.NoError(t, s.Close())
		t.Logf("round %d: %d acknowledged tasks consistent after SIGKILL", round, len(acked))
	}
}

func crashOnce(t *testing.T, testName string, env []string, acked map[int64]int) {
	cmd := exec.Command(os.Args[0], "-test.run=^"+testName+"$", "-test.count=1")
	cmd.Env = append(append(os.Environ(), CrashEnv+"=1"), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())

	lines := make(chan string, 1024)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	n := 0
	var kill <-chan time.Time
	deadline := time.After(2 * time.Minute)
	for killed := false; ; {
		select {
		case line, ok := <-lines:
			if !ok {
				require.True(t, killed, "crash child exited on its own: %s", stderr.String())
				_ = cmd.Wait()
				require.Positive(t, n)
				return
			}
			recordAck(t, line, acked)
			if n++; n == crashAckedFirst {
				// Kill at a random point of the burst, not on a write boundary.
				kill = time.After(time.Duration(rand.IntN(20_000)) * time.Microsecond)
			}
		case <-kill:
			require.NoError(t, cmd.Process.Kill()) // SIGKILL on Unix
			killed, kill = true, nil
		case <-deadline:
			_ = cmd.Process.Kill()
			t.Fatalf("crash child made no progress (%d acks): %s", n, stderr.String())
		}
	}
}

func recordAck(t *testing.T, line string, acked map[int64]int) {
	f := strings.Fields(line)
	if len(f) < 3 || f[0] != "ACK" {
		return // test framework output
	}
	id, err := strconv.ParseInt(f[2], 10, 64)
	require.NoError(t, err, line)
	acked[id]++
}

// checkConsistent verifies every task's state is the target of its last
// event, each event chain starts at submitted and follows the transition
// table, attempts equal the retries recorded, and every acknowledged write
// survived.
// stableRead reads a task and its events until the task row did not change
// around the events read. A killed client's last statement may still commit
// on a database server (PostgreSQL finishes a statement whose client died),
// and the task row and its events are read in two queries: each committed
// state is consistent, but two reads may straddle that late commit.
func stableRead(t *testing.T, s controlplane.Store, id int64) (*controlplane.Task, []*controlplane.TaskEvent) {
	ctx := t.Context()
	for try := 0; ; try++ {
		before, err := s.GetTask(ctx, id)
		require.NoError(t, err)
		evs, err := s.ListTaskEvents(ctx, id)
		require.NoError(t, err)
		after, err := s.GetTask(ctx, id)
		require.NoError(t, err)
		if (before.State == after.State && before.UpdatedAt.Equal(after.UpdatedAt)) || try == 50 {
			return after, evs
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func checkConsistent(t *testing.T, s controlplane.Store, acked map[int64]int) {
	ctx := t.Context()
	var tasks []*controlplane.Task
	for off := 0; ; off += controlplane.MaxPageLimit {
		page, total, err := s.ListTasks(ctx, controlplane.TaskFilter{Page: controlplane.Page{Limit: controlplane.MaxPageLimit, Offset: off}})
		require.NoError(t, err)
		tasks = append(tasks, page...)
		if off+len(page) >= total {
			require.Len(t, tasks, total)
			break
		}
	}
	byID := map[int64]bool{}
	for _, listed := range tasks {
		byID[listed.ID] = true
		task, evs := stableRead(t, s, listed.ID)
		require.Equal(t, controlplane.TaskState(""), evs[0].From, "task %d", task.ID)
		require.Equal(t, controlplane.TaskSubmitted, evs[0].To, "task %d", task.ID)
		retries := 0
		for i := 1; i < len(evs); i++ {
			require.Equal(t, evs[i-1].To, evs[i].From, "task %d event %d breaks the chain", task.ID, i)
			require.True(t, controlplane.CanTransition(evs[i].From, evs[i].To), "task %d: illegal %s → %s", task.ID, evs[i].From, evs[i].To)
			if evs[i].From.Terminal() && evs[i].To == controlplane.TaskQueued {
				retries++
			}
		}
		require.Equal(t, evs[len(evs)-1].To, task.State, "task %d state is its last event's target", task.ID)
		require.Equal(t, retries, task.Attempt, "task %d attempts match retry events", task.ID)
		require.GreaterOrEqual(t, len(evs), acked[task.ID], "task %d lost acknowledged transitions", task.ID)
		if task.State == controlplane.TaskRunning {
			require.NotNil(t, task.StartedAt, "task %d", task.ID)
		}
		if task.State.Terminal() {
			require.NotNil(t, task.FinishedAt, "task %d", task.ID)
		}
	}
	for id := range acked {
		require.True(t, byID[id], "acknowledged task %d lost", id)
	}
}
