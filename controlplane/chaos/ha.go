package chaos

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// HA runs of the harness (Options.Servers > 1): that many real server
// processes on one PostgreSQL database (Options.PostgresDSN) with a shared
// remote metrics store (Options.RemoteWriteURL/RemoteQueryURL, e.g. Debian's
// VictoriaMetrics); tasks are submitted round-robin to every server,
// simulated agents spread over them and fail over; a server fault kills
// the scheduler leader with SIGKILL, measures how long until another
// server leads, then restarts the killed one.

// serverProc is one HA server process.
type serverProc struct {
	idx    int
	addr   string
	base   string
	cmd    *exec.Cmd
	exited chan struct{}
}

// haState is what an HA run keeps besides the single-server fields.
type haState struct {
	mu        sync.Mutex
	procs     []*serverProc
	failovers []time.Duration
	answered  map[string]int // console/API answers per server after each failover
	acked     []int64        // task ids the API acknowledged
	survErrs  []string       // what a survivor answered instead of the API
}

// haSecretKey is the HA secret key every server of a run shares (32
// bytes, base64); a run's servers are its only users.
const haSecretKey = "Y2hhb3MtcnVuLXNoYXJlZC1oYS1zZWNyZXQta2V5ISE="

// up starts the servers and the admin client: one server on SQLite, or
// Options.Servers on PostgreSQL.
func (h *Harness) up(ctx context.Context) error {
	o := h.opts
	if o.Servers <= 1 {
		port, err := freePort()
		if err != nil {
			return err
		}
		host := "127.0.0.1"
		listen := host
		if h.nets != nil {
			listen = "0.0.0.0" // reachable from the namespaces through their veth links
		}
		h.port = port
		h.addr = fmt.Sprintf("%s:%d", listen, port)
		h.base = fmt.Sprintf("http://%s:%d", host, port)
		h.bases = []string{h.base}
		if err := h.startServer(ctx); err != nil {
			return err
		}
		h.admin = newAPIClient(h.base, h.hc)
		return nil
	}
	if o.PostgresDSN == "" || o.RemoteWriteURL == "" || o.RemoteQueryURL == "" {
		return fmt.Errorf("chaos: %d servers need PostgresDSN and a remote metrics store (HA refuses SQLite and the embedded TSDB)", o.Servers)
	}
	h.ha.answered = map[string]int{}
	for i := range o.Servers {
		port, err := freePort()
		if err != nil {
			return err
		}
		p := &serverProc{idx: i, addr: fmt.Sprintf("127.0.0.1:%d", port), base: fmt.Sprintf("http://127.0.0.1:%d", port)}
		h.ha.procs = append(h.ha.procs, p)
		h.bases = append(h.bases, p.base)
	}
	h.base = h.bases[0]
	// The first server creates the schema and the shared secrets; the
	// others start together once it is up.
	if err := h.startProc(ctx, h.ha.procs[0]); err != nil {
		return err
	}
	errs := make(chan error, len(h.ha.procs))
	for _, p := range h.ha.procs[1:] {
		go func() { errs <- h.startProc(ctx, p) }()
	}
	for range h.ha.procs[1:] {
		if err := <-errs; err != nil {
			return err
		}
	}
	h.admin = newMultiClient(h.bases, 0, h.hc)
	return nil
}

// agentClient is the API client of the i-th simulated agent: agents are
// spread over the servers and fail over between them.
func (h *Harness) agentClient(i int) *apiClient { return newMultiClient(h.bases, i, h.hc) }

// submitClient is worker w's client: submissions go round-robin.
func (h *Harness) submitClient(w int) *apiClient {
	if len(h.bases) == 1 {
		return h.admin
	}
	c := newMultiClient(h.bases, w, h.hc)
	c.bearer.Store(h.admin.bearer.Load())
	return c
}

func (h *Harness) startProc(ctx context.Context, p *serverProc) error {
	h.errMu.Lock()
	logPath := filepath.Join(h.opts.Dir, fmt.Sprintf("server%d-%d.log", p.idx, len(h.srvLogs)))
	h.srvLogs = append(h.srvLogs, logPath)
	h.errMu.Unlock()
	lf, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer lf.Close()
	o := h.opts
	spec, _ := json.Marshal(childSpec{DataDir: filepath.Join(o.Dir, fmt.Sprintf("server%d", p.idx)), Addr: p.addr,
		AdminPassword: adminPassword, DB: o.PostgresDSN, HA: true, SecretKey: haSecretKey,
		WriteURL: o.RemoteWriteURL, QueryURL: o.RemoteQueryURL})
	cmd := exec.Command(o.Executable, roleServer)
	cmd.Env = append(os.Environ(), envChild+"="+string(spec))
	cmd.Stdout, cmd.Stderr = lf, lf
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start server %d: %w", p.idx, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	h.ha.mu.Lock()
	p.cmd, p.exited = cmd, exited
	h.ha.mu.Unlock()
	err = retry(ctx, 2*time.Minute, func() error {
		select {
		case <-exited:
			return &httpError{Status: 400, Body: "server process exited"}
		default:
		}
		return newAPIClient(p.base, h.hc).do(ctx, "GET", "/health", nil, nil)
	})
	if err != nil {
		b, _ := os.ReadFile(logPath)
		return fmt.Errorf("server %d did not come up: %w; log: %s", p.idx, err, strings.TrimSpace(string(b)))
	}
	return nil
}

// leaderOf asks each live server whether it leads the scheduler (its
// heteroflow_scheduler_leader gauge, cheaper than the summary under
// load); -1 when none does (yet).
func (h *Harness) leaderOf(ctx context.Context, skip int) int {
	for _, p := range h.ha.procs {
		if p.idx == skip {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		lead := h.leads(cctx, p)
		cancel()
		if lead {
			return p.idx
		}
	}
	return -1
}

func (h *Harness) leads(ctx context.Context, p *serverProc) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.base+"/metrics", nil)
	if err != nil {
		return false
	}
	req.Header.Set("Authorization", "Bearer "+h.admin.bearer.Load().(string))
	res, err := h.hc.Do(req)
	if err != nil {
		return false
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if sc.Text() == "heteroflow_scheduler_leader 1" {
			return true
		}
	}
	return false
}

// killLeader kills the scheduler leader with SIGKILL, measures the time
// until another server leads, checks that every survivor answers the API
// and the console's data, and restarts the killed server.
func (h *Harness) killLeader(ctx context.Context) error {
	var leader int
	deadline := time.Now().Add(time.Minute)
	for leader = h.leaderOf(ctx, -1); leader < 0; leader = h.leaderOf(ctx, -1) {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("no scheduler leader among %d servers", len(h.ha.procs))
		}
		sleep(ctx, 200*time.Millisecond)
	}
	p := h.ha.procs[leader]
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return err
	}
	killed := time.Now()
	<-p.exited
	for h.leaderOf(ctx, leader) < 0 {
		if time.Since(killed) > 2*time.Minute || ctx.Err() != nil {
			return fmt.Errorf("no server took over within 2m of killing server %d", leader)
		}
		sleep(ctx, 50*time.Millisecond)
	}
	took := time.Since(killed)
	h.ha.mu.Lock()
	h.ha.failovers = append(h.ha.failovers, took)
	h.ha.mu.Unlock()
	h.opts.Logger.Info("fault: leader killed", "server", leader, "failover", took)
	// The API and the console's data through every survivor.
	for _, q := range h.ha.procs {
		if q.idx == leader {
			continue
		}
		c := newAPIClient(q.base, h.hc)
		c.bearer.Store(h.admin.bearer.Load())
		// retry waits out 429s: every caller of the run shares 127.0.0.1,
		// so the servers' per-address budgets are the harness's own.
		err := retry(ctx, 30*time.Second, func() error {
			if err := c.do(ctx, "GET", "/api/v1/tasks?limit=1", nil, nil); err != nil {
				return err
			}
			return c.do(ctx, "GET", "/api/v1/nodes?limit=1", nil, nil)
		})
		if err != nil {
			h.count("survivor_api_errors")
			h.ha.mu.Lock()
			h.ha.survErrs = append(h.ha.survErrs, fmt.Sprintf("%s after killing server %d: %v", q.base, leader, err))
			h.ha.mu.Unlock()
			continue
		}
		h.ha.mu.Lock()
		h.ha.answered[q.base]++
		h.ha.mu.Unlock()
	}
	sleep(ctx, 500*time.Millisecond)
	return h.startProc(ctx, p)
}

func (h *Harness) stopServers() {
	for _, p := range h.ha.procs {
		if p.cmd == nil {
			continue
		}
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, p := range h.ha.procs {
		if p.cmd == nil {
			continue
		}
		select {
		case <-p.exited:
		case <-time.After(30 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	}
}

// haReport copies the HA measurements into the report.
func (h *Harness) haReport(rep *Report) {
	h.ha.mu.Lock()
	defer h.ha.mu.Unlock()
	for _, d := range h.ha.failovers {
		rep.FailoverMillis = append(rep.FailoverMillis, d.Milliseconds())
	}
	rep.SurvivorAnswers = h.ha.answered
	rep.SurvivorErrors = h.ha.survErrs
	rep.Acknowledged = len(h.ha.acked)
}

func (h *Harness) ack(id int64) {
	h.ha.mu.Lock()
	h.ha.acked = append(h.ha.acked, id)
	h.ha.mu.Unlock()
}
