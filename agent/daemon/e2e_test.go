//go:build unix

package daemon_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/agent/agenttest"
	"github.com/heteroflow/heteroflow/agent/daemon"
	"github.com/heteroflow/heteroflow/agent/procgroup"
	"github.com/heteroflow/heteroflow/agent/protocol"
	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/agentapi"
	"github.com/heteroflow/heteroflow/controlplane/auth"
	"github.com/heteroflow/heteroflow/controlplane/httpapi"
	"github.com/heteroflow/heteroflow/controlplane/sqlite"
	"github.com/heteroflow/heteroflow/receivers/fakesmi"
	"github.com/heteroflow/heteroflow/receivers/smi"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// stack is a real control plane (SQLite, auth, REST API, agent API) on a
// fixed loopback address, so it can be killed and restarted in place.
type stack struct {
	t      *testing.T
	dbPath string
	addr   string
	db     *sqlite.DB
	svc    *agentapi.Service
	srv    *http.Server
	stop   context.CancelFunc
	admin  string // admin API key
	userID int64
}

func startStack(t *testing.T, dbPath, addr string) *stack {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, dbPath, sqlite.Options{Logger: quiet})
	require.NoError(t, err)
	key, err := auth.LoadOrCreateSigningKey(ctx, db)
	require.NoError(t, err)
	cfg := auth.DefaultConfig()
	cfg.SigningKey = key
	as, err := auth.New(db, cfg, quiet)
	require.NoError(t, err)
	auditor := httpapi.NewAuditor(db, quiet, httpapi.AuditorOptions{})
	api, err := httpapi.New(httpapi.Options{Store: db, Auth: as, Auditor: auditor, Logger: quiet, Registry: prometheus.NewRegistry()})
	require.NoError(t, err)
	svc, err := agentapi.New(agentapi.Options{Store: db, Auth: as, Logger: quiet, OfflineAfter: 5 * time.Second})
	require.NoError(t, err)
	svc.Mount(api)
	ln, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	s := &stack{t: t, dbPath: dbPath, addr: ln.Addr().String(), db: db, svc: svc, srv: &http.Server{Handler: api}}
	runCtx, cancel := context.WithCancel(ctx)
	s.stop = func() { cancel(); auditor.Close() }
	go svc.Run(runCtx)
	go s.srv.Serve(ln) //nolint:errcheck // ends with Close
	if u, err := db.GetUserByName(ctx, "admin"); err == nil {
		s.userID = u.ID
	} else {
		u := &controlplane.User{Username: "admin", Role: controlplane.RoleAdmin, Status: controlplane.UserActive}
		require.NoError(t, db.CreateUser(ctx, u))
		s.userID = u.ID
	}
	s.admin, _, err = as.CreateAPIKey(ctx, &auth.Principal{UserID: s.userID, Role: controlplane.RoleAdmin}, "e2e", controlplane.RoleAdmin, "", nil)
	require.NoError(t, err)
	return s
}

// kill stops the server abruptly: connections dropped, store closed.
func (s *stack) kill() {
	s.srv.Close()
	s.stop()
	s.db.Close()
}

func (s *stack) url() string { return "http://" + s.addr }

func (s *stack) call(method, path string, body, out any) int {
	s.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, s.url()+path, rd)
	req.Header.Set("Authorization", "Bearer "+s.admin)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(s.t, err)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode < 300 {
		require.NoError(s.t, json.Unmarshal(raw, out), string(raw))
	}
	return resp.StatusCode
}

func (s *stack) task(cmd ...string) int64 {
	s.t.Helper()
	ctx := context.Background()
	t := &controlplane.Task{Spec: controlplane.TaskSpec{Name: "e2e", Command: cmd}, OwnerID: s.userID}
	require.NoError(s.t, s.db.CreateTask(ctx, t))
	_, err := s.db.TransitionTask(ctx, controlplane.Transition{TaskID: t.ID, From: controlplane.TaskSubmitted, To: controlplane.TaskQueued})
	require.NoError(s.t, err)
	return t.ID
}

func (s *stack) taskSpec(spec controlplane.TaskSpec) int64 {
	s.t.Helper()
	ctx := context.Background()
	t := &controlplane.Task{Spec: spec, OwnerID: s.userID}
	require.NoError(s.t, s.db.CreateTask(ctx, t))
	_, err := s.db.TransitionTask(ctx, controlplane.Transition{TaskID: t.ID, From: controlplane.TaskSubmitted, To: controlplane.TaskQueued})
	require.NoError(s.t, err)
	return t.ID
}

func (s *stack) state(id int64) controlplane.TaskState {
	t, err := s.db.GetTask(context.Background(), id)
	if err != nil {
		return ""
	}
	return t.State
}

// setLoads writes the agent's task load into the simulated node's state.
func (f *simulated) setLoads(per map[int]daemon.DeviceLoad) error {
	loads := map[int]fakesmi.DeviceState{}
	for i, l := range per {
		loads[i] = fakesmi.DeviceState{UtilizationPercent: l.UtilizationPercent, MemoryUsedMiB: l.MemoryUsedMiB,
			PartitionMemoryUsedMiB: l.PartitionMemoryMiB}
	}
	return fakesmi.SetLoads(f.opts.StatePath, loads)
}

// simulated is an in-process fakesmi node: the agent's vendor CLI calls go
// to fakesmi.Run, and each call is recorded.
type simulated struct {
	mu    sync.Mutex
	opts  fakesmi.Options
	calls []string
}

func (f *simulated) run(_ context.Context, name string, args ...string) ([]byte, error) {
	f.mu.Lock()
	f.calls = append(f.calls, name+" "+strings.Join(args, " "))
	f.mu.Unlock()
	if !slices.Contains(fakesmi.ToolsFor(f.opts.Profile.Vendor), name) {
		return nil, fmt.Errorf("%w: %s", smi.ErrToolNotFound, name)
	}
	var out bytes.Buffer
	err := fakesmi.Run(&out, f.opts, name, args)
	return out.Bytes(), err
}

func (f *simulated) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	return f.run(ctx, name, args...)
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

func TestAgentEndToEnd(t *testing.T) {
	// Secrets the agent process holds (make run puts the admin password in
	// its environment): no task may see them.
	t.Setenv("HETEROFLOW_ADMIN_PASSWORD", "agent-held-admin-password")
	dir := agenttest.DataDir(t)
	s := startStack(t, filepath.Join(dir, "hf.db"), "127.0.0.1:0")
	defer func() { s.kill() }()

	var tok struct{ Token string }
	require.Equal(t, http.StatusCreated, s.call("POST", "/api/v1/bootstrap-tokens", map[string]any{"description": "e2e"}, &tok))
	sim := &simulated{opts: fakesmi.Options{StatePath: filepath.Join(dir, "fake-state.json"),
		Profile: &fakesmi.Profile{Vendor: "nvidia", Model: "NVIDIA H100 80GB HBM3", Count: 8, MemoryMiB: 81559}}}
	ctx, cancel := context.WithCancel(context.Background())
	agentDone := make(chan error, 1)
	go func() {
		agentDone <- daemon.Run(ctx, daemon.Config{Server: s.url(), Token: tok.Token, DataDir: filepath.Join(dir, "agent"),
			Heartbeat: 300 * time.Millisecond, PollWait: 2 * time.Second, Grace: time.Second, Logger: quiet,
			SimulatedLoad: sim.setLoads, SMI: sim.run, CLI: sim})
	}()
	defer func() { cancel(); <-agentDone }()

	// The node registers with its 8 simulated H100s.
	var nodes struct {
		Items []struct {
			ID          string   `json:"id"`
			State       string   `json:"state"`
			Vendors     []string `json:"vendors"`
			DeviceCount int      `json:"device_count"`
			Inventory   []struct {
				Devices []struct {
					UUID string `json:"uuid"`
				} `json:"devices"`
			} `json:"inventory"`
		} `json:"items"`
	}
	waitFor(t, "node registered", func() bool {
		return s.call("GET", "/api/v1/nodes", nil, &nodes) == 200 && len(nodes.Items) == 1
	})
	node := nodes.Items[0]
	require.Equal(t, []string{"nvidia"}, node.Vendors)
	require.Equal(t, 8, node.DeviceCount)
	uuid := node.Inventory[0].Devices[3].UUID
	require.True(t, strings.HasPrefix(uuid, "GPU-"))

	t.Run("task sees exactly its device", func(t *testing.T) {
		id := s.task("sh", "-c", "echo $CUDA_VISIBLE_DEVICES")
		require.Equal(t, 200, s.call("POST", fmt.Sprintf("/api/v1/tasks/%d/assign", id), map[string]any{
			"node_id": node.ID, "devices": []protocol.DeviceSlice{{Vendor: "nvidia", Index: 3, UUID: uuid}}}, nil))
		waitFor(t, "task succeeded", func() bool { return s.state(id) == controlplane.TaskSucceeded })
		var lg struct{ Data string }
		waitFor(t, "log shipped", func() bool {
			return s.call("GET", fmt.Sprintf("/api/v1/tasks/%d/logs", id), nil, &lg) == 200 && lg.Data != ""
		})
		require.Equal(t, uuid+"\n", lg.Data)
	})

	t.Run("task environment is clean", func(t *testing.T) {
		id := s.taskSpec(controlplane.TaskSpec{Name: "env", Command: []string{"env"},
			Env: map[string]string{"PLAIN": "1"}, SecretEnv: map[string]string{"DB_PASSWORD": "handed-to-the-agent-only"}})
		require.Equal(t, 200, s.call("POST", fmt.Sprintf("/api/v1/tasks/%d/assign", id), map[string]any{"node_id": node.ID}, nil))
		waitFor(t, "task succeeded", func() bool { return s.state(id) == controlplane.TaskSucceeded })
		var lg struct{ Data string }
		waitFor(t, "log shipped", func() bool {
			return s.call("GET", fmt.Sprintf("/api/v1/tasks/%d/logs", id), nil, &lg) == 200 && lg.Data != ""
		})
		require.Contains(t, lg.Data, fmt.Sprintf("HETEROFLOW_TASK_ID=%d\n", id))
		require.NotContains(t, lg.Data, "agent-held-admin-password")
		require.NotContains(t, lg.Data, "HETEROFLOW_ADMIN_PASSWORD")
		// The task's own env and secret_env reach it through the assignment.
		require.Contains(t, lg.Data, "PLAIN=1\n")
		require.Contains(t, lg.Data, "DB_PASSWORD=handed-to-the-agent-only\n")
	})

	t.Run("gold MIG slice is created and removed through nvidia-smi", func(t *testing.T) {
		id := s.taskSpec(controlplane.TaskSpec{Name: "mig", Command: []string{"sh", "-c", "echo $CUDA_VISIBLE_DEVICES"},
			DeviceCount: 1, ComputePercent: 100, QoS: controlplane.QoSGold, MemoryMiB: 10240})
		require.Equal(t, 200, s.call("POST", fmt.Sprintf("/api/v1/tasks/%d/assign", id), map[string]any{
			"node_id": node.ID, "devices": []protocol.DeviceSlice{{Vendor: "nvidia", Index: 1,
				UUID: node.Inventory[0].Devices[1].UUID, Isolation: protocol.IsolationMIG, Profile: "1g.10gb"}}}, nil))
		waitFor(t, "MIG task succeeded", func() bool { return s.state(id) == controlplane.TaskSucceeded })
		var lg struct{ Data string }
		waitFor(t, "log shipped", func() bool {
			return s.call("GET", fmt.Sprintf("/api/v1/tasks/%d/logs", id), nil, &lg) == 200 && lg.Data != ""
		})
		require.True(t, strings.HasPrefix(lg.Data, "MIG-"), lg.Data)
		sim.mu.Lock()
		calls := slices.Clone(sim.calls)
		sim.mu.Unlock()
		require.Contains(t, calls, "nvidia-smi mig -i 1 -cgi 1g.10gb -C")
		require.Contains(t, calls, "nvidia-smi mig -i 1 -dgi -gi 1")
		st, err := fakesmi.LoadState(sim.opts.StatePath)
		require.NoError(t, err)
		require.Empty(t, st.Partitions) // removed on exit
	})

	t.Run("cancelled sleep dies with its children", func(t *testing.T) {
		id := s.task("sh", "-c", "sleep 600 & sleep 600")
		require.Equal(t, 200, s.call("POST", fmt.Sprintf("/api/v1/tasks/%d/assign", id), map[string]any{"node_id": node.ID}, nil))
		waitFor(t, "task running", func() bool { return s.state(id) == controlplane.TaskRunning })
		var pid int
		waitFor(t, "agent reports the pid", func() bool {
			n, err := s.db.GetNode(context.Background(), node.ID)
			if err != nil {
				return false
			}
			var running []protocol.RunningTask
			_ = json.Unmarshal(n.Running, &running)
			for _, r := range running {
				if r.TaskID == id {
					pid = r.PID
				}
			}
			return pid > 0 && len(procgroup.Members(pid)) == 3
		})
		// As POST /api/v1/tasks/{id}/cancel does.
		_, err := s.db.TransitionTask(context.Background(), controlplane.Transition{TaskID: id,
			From: controlplane.TaskRunning, To: controlplane.TaskCancelled, Actor: "admin"})
		require.NoError(t, err)
		waitFor(t, "process group gone", func() bool { return !procgroup.Alive(pid) })
		require.Equal(t, controlplane.TaskCancelled, s.state(id))
	})

	t.Run("killing the server mid-task loses nothing", func(t *testing.T) {
		id := s.task("sh", "-c", "sleep 1; echo survived")
		require.Equal(t, 200, s.call("POST", fmt.Sprintf("/api/v1/tasks/%d/assign", id), map[string]any{"node_id": node.ID}, nil))
		waitFor(t, "task running", func() bool { return s.state(id) == controlplane.TaskRunning })
		addr := s.addr
		s.kill()
		time.Sleep(2 * time.Second) // the task ends while the server is down
		s = startStack(t, s.dbPath, addr)
		waitFor(t, "outbox delivered the end", func() bool { return s.state(id) == controlplane.TaskSucceeded })
		var lg struct{ Data string }
		waitFor(t, "log shipped after restart", func() bool {
			return s.call("GET", fmt.Sprintf("/api/v1/tasks/%d/logs", id), nil, &lg) == 200 && lg.Data != ""
		})
		require.Equal(t, "survived\n", lg.Data)
		evs, err := s.db.ListTaskEvents(context.Background(), id)
		require.NoError(t, err)
		require.Len(t, evs, 5) // created, queued, scheduled, running, succeeded: nothing lost, nothing twice
	})
}
