package chaos

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/storeopen"
)

// Options bound a run. Zero values take the defaults of withDefaults.
type Options struct {
	Dir           string        // working folder (server data, agent data, logs)
	Tasks         int           // tasks submitted
	SimAgents     int           // simulated agents in this process
	RealAgents    int           // real agent processes (agent/daemon)
	GPUsPerAgent  int           // simulated GPUs per simulated agent
	CPUPercent    int           // share of tasks without devices (the real agents take only these)
	MaxRetries    int           // per task
	FailPercent   int           // simulated tasks that exit 1
	TaskMin       time.Duration // simulated task duration range
	TaskMax       time.Duration
	Heartbeat     time.Duration // simulated agents' heartbeat period
	ServerKills   int           // kill -9 of the server during the run
	AgentKills    int           // kill -9 of agents (simulated and real)
	Partitions    int           // network partitions
	PartitionFor  time.Duration // how long a partition lasts
	Netns         bool          // real agents in network namespaces (root, `ip`)
	Timeout       time.Duration // the whole run
	Executable    string        // binary started as server and real agents; default os.Executable()
	Logger        *slog.Logger
	SubmitWorkers int
	// Servers > 1 runs that many HA servers on PostgresDSN with the remote
	// metrics store at RemoteWriteURL/RemoteQueryURL (ha.go); server faults
	// then kill the scheduler leader.
	Servers        int
	PostgresDSN    string
	RemoteWriteURL string
	RemoteQueryURL string
}

func (o Options) withDefaults() Options {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.Tasks, 300)
	def(&o.SimAgents, 20)
	def(&o.GPUsPerAgent, 8)
	def(&o.SubmitWorkers, 8)
	if o.TaskMin <= 0 {
		o.TaskMin = 20 * time.Millisecond
	}
	if o.TaskMax < o.TaskMin {
		o.TaskMax = o.TaskMin + 200*time.Millisecond
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = 2 * time.Second
	}
	if o.PartitionFor <= 0 {
		o.PartitionFor = 3 * time.Second
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Minute
	}
	if o.Servers > 1 {
		// HA servers listen on loopback only: real agents stay outside
		// network namespaces.
		o.Netns = false
	}
	if o.Executable == "" {
		o.Executable, _ = os.Executable()
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return o
}

// Report is the run's accounting; OK() says whether every check held.
type Report struct {
	Submitted      int            `json:"submitted"`
	Terminal       int            `json:"terminal"`
	ByState        map[string]int `json:"by_state"`
	NoReason       []int64        `json:"no_reason,omitempty"`      // failed/cancelled/timed out without a reason
	Lost           []int64        `json:"lost,omitempty"`           // submitted, not terminal at the end
	RunViolations  []string       `json:"run_violations,omitempty"` // a task running twice at once
	SimRuns        int            `json:"sim_runs"`                 // runs on simulated agents (retries included)
	RealNodeTasks  int            `json:"real_node_tasks"`          // tasks that ended on a real agent process
	LedgerRows     int            `json:"ledger_rows"`              // allocation rows at the end
	LiveAllocRows  int            `json:"live_alloc_rows"`          // rows of tasks still placed (must equal LedgerRows)
	Panics         []string       `json:"panics,omitempty"`
	GoroutineLeak  int            `json:"goroutine_leak"`
	FDLeak         int            `json:"fd_leak"`
	ServerKills    int            `json:"server_kills"`
	AgentKills     int            `json:"agent_kills"`
	Partitions     int            `json:"partitions"`
	NetnsUsed      bool           `json:"netns_used"`
	Elapsed        time.Duration  `json:"elapsed_ns"`
	SubmitElapsed  time.Duration  `json:"submit_elapsed_ns"`
	Errors         map[string]int `json:"transient_errors"` // retried calls, by kind
	TasksPerSecond float64        `json:"tasks_per_second"`
	// HA runs: time from the leader's SIGKILL until another server leads,
	// the survivors' API answers after each failover, tasks the API
	// acknowledged, acknowledged tasks not terminal at the end, and tasks
	// created by a submission whose answer was lost with its server.
	FailoverMillis   []int64        `json:"failover_ms,omitempty"`
	SurvivorAnswers  map[string]int `json:"survivor_answers,omitempty"`
	SurvivorErrors   []string       `json:"survivor_errors,omitempty"`
	Acknowledged     int            `json:"acknowledged,omitempty"`
	AckedNotTerminal []int64        `json:"acked_not_terminal,omitempty"`
	UnackedCreated   int            `json:"unacked_created,omitempty"`
}

// OK reports whether the accounting is exact.
func (r *Report) OK() error {
	var errs []error
	if r.Terminal != r.Submitted {
		errs = append(errs, fmt.Errorf("%d of %d tasks terminal", r.Terminal, r.Submitted))
	}
	if len(r.Lost) > 0 {
		errs = append(errs, fmt.Errorf("%d tasks lost or not terminal (first: %v)", len(r.Lost), r.Lost[:min(5, len(r.Lost))]))
	}
	if len(r.NoReason) > 0 {
		errs = append(errs, fmt.Errorf("%d unsuccessful tasks without a reason (first: %v)", len(r.NoReason), r.NoReason[:min(5, len(r.NoReason))]))
	}
	if len(r.RunViolations) > 0 {
		errs = append(errs, fmt.Errorf("tasks ran twice at once: %v", r.RunViolations[:min(5, len(r.RunViolations))]))
	}
	if r.UnackedCreated > 0 {
		errs = append(errs, fmt.Errorf("%d tasks created that no submission acknowledged (a retried submission made a second task)", r.UnackedCreated))
	}
	if len(r.AckedNotTerminal) > 0 {
		errs = append(errs, fmt.Errorf("%d acknowledged tasks not terminal (first: %v)", len(r.AckedNotTerminal), r.AckedNotTerminal[:min(5, len(r.AckedNotTerminal))]))
	}
	if r.LedgerRows != r.LiveAllocRows {
		errs = append(errs, fmt.Errorf("ledger has %d rows, live allocations %d", r.LedgerRows, r.LiveAllocRows))
	}
	if len(r.Panics) > 0 {
		errs = append(errs, fmt.Errorf("panics: %v", r.Panics))
	}
	if r.GoroutineLeak > 0 {
		errs = append(errs, fmt.Errorf("%d goroutines leaked", r.GoroutineLeak))
	}
	if r.FDLeak > 0 {
		errs = append(errs, fmt.Errorf("%d file descriptors leaked", r.FDLeak))
	}
	return errors.Join(errs...)
}

// Harness is one run.
type Harness struct {
	opts  Options
	runs  runLog
	errMu sync.Mutex
	errs  map[string]int

	addr         string // server listen address (host side)
	base         string
	port         int
	bases        []string // every server's API (one unless HA)
	ha           haState
	admin        *apiClient
	hc           *http.Client
	server       *exec.Cmd
	serverExited chan struct{}
	srvLogs      []string
	sims         []*simAgent
	reals        []*realAgent
	nets         *netnsSet
}

func (h *Harness) count(kind string) {
	h.errMu.Lock()
	h.errs[kind]++
	h.errMu.Unlock()
}

const adminPassword = "Soak-Run-Password-7x"

// Run executes the whole soak-and-chaos run and returns its accounting.
func Run(ctx context.Context, opts Options) (*Report, error) {
	opts = opts.withDefaults()
	if opts.Dir == "" {
		return nil, errors.New("chaos: Dir is required")
	}
	startG, startFD := runtime.NumGoroutine(), openFDs()
	h := &Harness{opts: opts, errs: map[string]int{}, runs: runLog{active: map[int64]string{}}}
	rep := &Report{Submitted: opts.Tasks, ByState: map[string]int{}}
	t0 := time.Now()
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	tr := &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: 30 * time.Second}
	h.hc = &http.Client{Transport: tr, Timeout: 30 * time.Second}
	err := h.run(ctx, rep)
	h.teardown()
	tr.CloseIdleConnections()
	if err != nil {
		return rep, err
	}
	if err := h.account(ctx, rep); err != nil {
		return rep, err
	}
	rep.Elapsed = time.Since(t0)
	rep.TasksPerSecond = float64(rep.Terminal) / rep.Elapsed.Seconds()
	rep.Errors = h.errs
	// Leaks: what is left once everything the run started has stopped.
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) && (runtime.NumGoroutine() > startG || openFDs() > startFD) {
		time.Sleep(100 * time.Millisecond)
	}
	rep.GoroutineLeak = max(0, runtime.NumGoroutine()-startG)
	rep.FDLeak = max(0, openFDs()-startFD)
	return rep, nil
}

func (h *Harness) run(ctx context.Context, rep *Report) error {
	o := h.opts
	log := o.Logger
	if err := os.MkdirAll(o.Dir, 0o711); err != nil {
		return err
	}
	if err := os.Chmod(o.Dir, 0o711); err != nil {
		return err
	}
	if o.RealAgents > 0 && o.Netns {
		nets, err := newNetns(o.RealAgents)
		if err != nil {
			return fmt.Errorf("network namespaces: %w", err)
		}
		h.nets = nets
		rep.NetnsUsed = true
	}
	if err := h.up(ctx); err != nil {
		return err
	}
	if err := h.login(ctx); err != nil {
		return err
	}
	log.Info("server up", "addr", h.base)
	// Enroll the simulated agents.
	for i := range o.SimAgents {
		a := &simAgent{name: fmt.Sprintf("sim-%03d", i), h: h, cl: h.agentClient(i), gpus: o.GPUsPerAgent,
			handled: map[int64]bool{}, running: map[string]*simRun{}, poke: make(chan struct{}, 1)}
		tok, err := h.bootstrapToken(ctx)
		if err != nil {
			return err
		}
		if err := a.enroll(ctx, tok); err != nil {
			return err
		}
		a.start(ctx)
		h.sims = append(h.sims, a)
	}
	for i := range o.RealAgents {
		tok, err := h.bootstrapToken(ctx)
		if err != nil {
			return err
		}
		ra := &realAgent{h: h, idx: i, dir: filepath.Join(o.Dir, fmt.Sprintf("real-%d", i)), token: tok, server: strings.Join(h.bases, ",")}
		if h.nets != nil {
			ra.netns = h.nets.names[i]
			ra.server = fmt.Sprintf("http://%s:%d", h.nets.hostIPs[i], h.port)
		}
		if err := ra.start(); err != nil {
			return err
		}
		h.reals = append(h.reals, ra)
	}
	log.Info("agents up", "simulated", len(h.sims), "real", len(h.reals))
	// Faults run alongside the submission and until every task is terminal.
	faultCtx, stopFaults := context.WithCancel(ctx)
	var fwg sync.WaitGroup
	fwg.Add(1)
	go func() { defer fwg.Done(); h.faults(faultCtx, rep) }()
	ts := time.Now()
	if err := h.submit(ctx); err != nil {
		stopFaults()
		fwg.Wait()
		return err
	}
	rep.SubmitElapsed = time.Since(ts)
	log.Info("submitted", "tasks", o.Tasks, "in", rep.SubmitElapsed)
	// Every planned fault happens, then the run drains.
	fwg.Wait()
	stopFaults()
	return h.waitTerminal(ctx)
}

// faults spreads the kills and partitions over the run.
func (h *Harness) faults(ctx context.Context, rep *Report) {
	o := h.opts
	type fault struct{ kind string }
	var plan []fault
	for range o.ServerKills {
		plan = append(plan, fault{"server"})
	}
	for range o.AgentKills {
		plan = append(plan, fault{"agent"})
	}
	for range o.Partitions {
		plan = append(plan, fault{"partition"})
	}
	rand.Shuffle(len(plan), func(i, j int) { plan[i], plan[j] = plan[j], plan[i] })
	// Spread over the expected submission time (at least a few seconds apart).
	gap := max(2*time.Second, time.Duration(o.Tasks)*time.Millisecond*4/time.Duration(max(1, len(plan))))
	for _, f := range plan {
		sleep(ctx, gap)
		if ctx.Err() != nil {
			return
		}
		switch f.kind {
		case "server":
			kill := h.killServer
			if len(h.ha.procs) > 0 {
				kill = h.killLeader
			}
			if err := kill(ctx); err != nil {
				h.opts.Logger.Error("server restart failed", "err", err)
				h.count("server_restart_failed")
				continue
			}
			rep.ServerKills++
			h.opts.Logger.Info("fault: server killed with SIGKILL and restarted")
		case "agent":
			n := len(h.sims) + len(h.reals)
			i := rand.IntN(n)
			if i < len(h.sims) {
				a := h.sims[i]
				a.kill()
				sleep(ctx, time.Second)
				a.start(ctx)
			} else if err := h.reals[i-len(h.sims)].kill9AndRestart(); err != nil {
				h.count("agent_restart_failed")
				continue
			}
			rep.AgentKills++
			h.opts.Logger.Info("fault: agent killed with SIGKILL and restarted", "agent", i)
		case "partition":
			h.partition(ctx)
			rep.Partitions++
			h.opts.Logger.Info("fault: partition healed")
		}
	}
}

// partition cuts one real agent's namespace off (its veth link down) and
// a tenth of the simulated agents, heals after PartitionFor.
func (h *Harness) partition(ctx context.Context) {
	var cut []*simAgent
	for _, a := range h.sims {
		if rand.IntN(10) == 0 {
			a.cl.cut.Store(true)
			cut = append(cut, a)
		}
	}
	var link string
	if h.nets != nil && len(h.nets.hostLinks) > 0 {
		link = h.nets.hostLinks[rand.IntN(len(h.nets.hostLinks))]
		if err := ipCmd("link", "set", link, "down"); err != nil {
			h.count("partition_failed")
			link = ""
		}
	}
	sleep(ctx, h.opts.PartitionFor)
	for _, a := range cut {
		a.cl.cut.Store(false)
	}
	if link != "" {
		if err := ipCmd("link", "set", link, "up"); err != nil {
			h.count("heal_failed")
		}
	}
}

func (h *Harness) submit(ctx context.Context) error {
	o := h.opts
	runStamp := time.Now().UnixNano() // keys of this run only
	var next atomic.Int64
	var firstErr error
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := range o.SubmitWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := h.submitClient(w)
			for {
				i := next.Add(1)
				if i > int64(o.Tasks) || ctx.Err() != nil {
					return
				}
				spec := map[string]any{"name": fmt.Sprintf("chaos-%d", i), "command": []string{"true"},
					"max_retries": o.MaxRetries, "labels": map[string]string{"chaos": "1"}}
				if int(i%100) >= o.CPUPercent {
					spec["device_count"] = 1
					spec["vendor"] = "nvidia"
				} else {
					// More CPU than a simulated node has (1 core): only the real
					// agent processes (their machine's cores) take these.
					spec["cpu_milli"] = 1500
				}
				var created struct {
					ID int64 `json:"id"`
				}
				// One key for every try of this submission: a retry after
				// a server died before answering gets the task back.
				key := fmt.Sprintf("chaos-%d-%d", runStamp, i)
				err := retry(ctx, 2*time.Minute, func() error {
					err := cl.doKeyed(ctx, "POST", "/api/v1/tasks", key, spec, &created)
					var he *httpError
					if errors.As(err, &he) && he.Status == 401 {
						_ = h.login(ctx)
						cl.bearer.Store(h.admin.bearer.Load())
					}
					if err != nil {
						h.count("submit_retries")
					}
					return err
				})
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("submit task %d: %w", i, err)
					}
					mu.Unlock()
					return
				}
				h.ack(created.ID)
			}
		}()
	}
	wg.Wait()
	return firstErr
}

// waitTerminal polls the task counts until every task is terminal.
func (h *Harness) waitTerminal(ctx context.Context) error {
	for {
		var page struct {
			Total int `json:"total"`
		}
		err := h.admin.do(ctx, "GET", "/api/v1/tasks?state=submitted,queued,scheduled,running&limit=1&label=chaos%3D1", nil, &page)
		var he *httpError
		if errors.As(err, &he) && he.Status == 401 {
			_ = h.login(ctx)
		}
		if err == nil && page.Total == 0 {
			return nil
		}
		if ctx.Err() != nil {
			return nil // accounted as not terminal
		}
		h.opts.Logger.Info("waiting", "open", page.Total, "err", err)
		sleep(ctx, 2*time.Second)
	}
}

func (h *Harness) login(ctx context.Context) error {
	var resp struct {
		AccessToken string `json:"access_token"`
	}
	err := retry(ctx, time.Minute, func() error {
		return newMultiClient(h.bases, 0, h.hc).do(ctx, "POST", "/api/v1/auth/login",
			map[string]string{"username": "admin", "password": adminPassword}, &resp)
	})
	if err != nil {
		return fmt.Errorf("login: %w", err)
	}
	h.admin.bearer.Store(resp.AccessToken)
	return nil
}

func (h *Harness) bootstrapToken(ctx context.Context) (string, error) {
	var tok struct {
		Token string `json:"token"`
	}
	err := retry(ctx, time.Minute, func() error {
		return h.admin.do(ctx, "POST", "/api/v1/bootstrap-tokens", map[string]any{"description": "chaos"}, &tok)
	})
	return tok.Token, err
}

func (h *Harness) startServer(ctx context.Context) error {
	logPath := filepath.Join(h.opts.Dir, fmt.Sprintf("server-%d.log", len(h.srvLogs)))
	lf, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer lf.Close()
	h.srvLogs = append(h.srvLogs, logPath)
	spec, _ := json.Marshal(childSpec{DataDir: filepath.Join(h.opts.Dir, "server"), Addr: h.addr, AdminPassword: adminPassword})
	cmd := exec.Command(h.opts.Executable, roleServer)
	cmd.Env = append(os.Environ(), envChild+"="+string(spec))
	cmd.Stdout, cmd.Stderr = lf, lf
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start server: %w", err)
	}
	h.server = cmd
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	h.serverExited = exited
	err = retry(ctx, time.Minute, func() error {
		select {
		case <-exited:
			return &httpError{Status: 400, Body: "server process exited"}
		default:
		}
		return newAPIClient(h.base, h.hc).do(ctx, "GET", "/health", nil, nil)
	})
	if err != nil {
		b, _ := os.ReadFile(logPath)
		return fmt.Errorf("server did not come up: %w; log: %s", err, strings.TrimSpace(string(b)))
	}
	return nil
}

func (h *Harness) killServer(ctx context.Context) error {
	if err := h.server.Process.Signal(syscall.SIGKILL); err != nil {
		return err
	}
	<-h.serverExited
	sleep(ctx, 500*time.Millisecond)
	return h.startServer(ctx)
}

func (h *Harness) teardown() {
	for _, a := range h.sims {
		a.kill()
		a.mu.Lock()
		for _, r := range a.running {
			r.timer.Stop()
		}
		a.mu.Unlock()
	}
	for _, r := range h.reals {
		r.stop()
	}
	h.stopServers()
	if h.server != nil {
		_ = h.server.Process.Signal(syscall.SIGTERM)
		select {
		case <-h.serverExited:
		case <-time.After(30 * time.Second):
			_ = h.server.Process.Kill()
			<-h.serverExited
		}
	}
	if h.nets != nil {
		h.nets.remove()
	}
}

// account opens the store the server left and checks everything.
func (h *Harness) account(ctx context.Context, rep *Report) error {
	st, err := storeopen.Open(ctx, h.opts.PostgresDSN, filepath.Join(h.opts.Dir, "server"), h.opts.Logger)
	if err != nil {
		return fmt.Errorf("open store: %w", err)
	}
	defer st.Close()
	live := map[controlplane.TaskState]bool{controlplane.TaskScheduled: true, controlplane.TaskRunning: true}
	placed := map[int64]bool{}
	simNodes := map[string]bool{}
	for _, a := range h.sims {
		simNodes[a.nodeID] = true
	}
	seen := 0
	terminal := map[int64]bool{}
	for off := 0; ; off += 1000 {
		ts, _, err := st.ListTasks(ctx, controlplane.TaskFilter{Label: map[string]string{"chaos": "1"}, Page: controlplane.Page{Limit: 1000, Offset: off}})
		if err != nil {
			return err
		}
		for _, t := range ts {
			seen++
			rep.ByState[string(t.State)]++
			switch t.State {
			case controlplane.TaskSucceeded:
				rep.Terminal++
				terminal[t.ID] = true
			case controlplane.TaskFailed, controlplane.TaskCancelled, controlplane.TaskTimedOut:
				rep.Terminal++
				terminal[t.ID] = true
				if strings.TrimSpace(t.Reason) == "" {
					rep.NoReason = append(rep.NoReason, t.ID)
				}
			default:
				rep.Lost = append(rep.Lost, t.ID)
			}
			if live[t.State] {
				placed[t.ID] = true
			}
			if t.NodeID != "" && !simNodes[t.NodeID] {
				rep.RealNodeTasks++
			}
		}
		if len(ts) < 1000 {
			break
		}
	}
	h.haReport(rep)
	for _, id := range h.ha.acked {
		if !terminal[id] {
			rep.AckedNotTerminal = append(rep.AckedNotTerminal, id)
		}
	}
	if seen > rep.Submitted {
		// A task created but never acknowledged: submissions carry an
		// Idempotency-Key, so a retry after a server died before it
		// answered is answered with the first task; one left over means
		// a submission was given up (they must end too: counted).
		rep.UnackedCreated, rep.Submitted = seen-rep.Submitted, seen
	}
	if seen != rep.Submitted {
		rep.Lost = append(rep.Lost, int64(-(rep.Submitted - seen))) // negative: count of tasks missing entirely
	}
	ss, ok := st.(controlplane.SchedulingStore)
	if !ok {
		return errors.New("store has no allocation ledger")
	}
	rows, err := ss.ListAllocations(ctx, "")
	if err != nil {
		return err
	}
	rep.LedgerRows = len(rows)
	for _, r := range rows {
		if placed[r.TaskID] {
			rep.LiveAllocRows++
		}
	}
	h.runs.mu.Lock()
	rep.RunViolations = append(rep.RunViolations, h.runs.violations...)
	rep.SimRuns = h.runs.runs
	h.runs.mu.Unlock()
	logs := append([]string{}, h.srvLogs...)
	for _, r := range h.reals {
		logs = append(logs, r.logs...)
	}
	for _, p := range logs {
		if found := scanPanics(p); found != "" {
			rep.Panics = append(rep.Panics, filepath.Base(p)+": "+found)
		}
	}
	sort.Slice(rep.Lost, func(i, j int) bool { return rep.Lost[i] < rep.Lost[j] })
	return nil
}

func scanPanics(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "panic:") || strings.HasPrefix(l, "fatal error:") || strings.Contains(l, "DATA RACE") {
			return l
		}
	}
	return ""
}

func openFDs() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0
	}
	return len(ents)
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
