package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/heteroflow/heteroflow/agent/credentials"
	"github.com/heteroflow/heteroflow/agent/outbox"
	"github.com/heteroflow/heteroflow/agent/protocol"
	"github.com/heteroflow/heteroflow/agent/runner"
	"github.com/heteroflow/heteroflow/agent/state"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// Agent is one running node agent.
type Agent struct {
	cfg    Config
	creds  credentials.Credentials
	cl     *client
	out    *outbox.Outbox
	st     *state.Store
	run    *runner.Runner
	silver runner.Silver // what the node enforces for QoS Silver
	inv    []inventory.Snapshot
	sentAt string // shape of the inventory last sent

	mu      sync.Mutex
	tasks   map[string]*task // key task/attempt
	handled map[int64]bool   // assignment ids already acted on
	started time.Time
	self    *selfMetrics // the agent's own series, pushed after each heartbeat
	// cert is the client certificate in use (nil without mTLS); renewals
	// counts the renewals done by this process.
	cert     *certHolder
	renewals atomic.Int64
}

type task struct {
	spec    protocol.TaskSpec
	h       *runner.Handle
	shipMu  sync.Mutex
	shipped map[string]int64 // stream → next offset to ship
	trace   string           // traceparent of the agent's start span ("" when tracing is off)
}

func key(id int64, attempt int) string { return fmt.Sprintf("%d/%d", id, attempt) }

// Run enrolls if needed and serves until ctx ends. Running tasks are left
// to the next agent start (which kills them as orphans and reports it).
func Run(ctx context.Context, cfg Config) error {
	cfg = cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return err
	}
	a := &Agent{cfg: cfg, tasks: map[string]*task{}, handled: map[int64]bool{}, started: time.Now()}
	log := cfg.Logger
	if err := prepareDataDir(cfg.DataDir); err != nil {
		return err
	}
	a.silver = runner.DetectSilver(exec.LookPath, runner.FileExists, filepath.Join(cfg.DataDir, "mps"))
	a.inv = detect(ctx, cfg.SMI, log)
	a.silver.Enforce(a.inv)
	attachRDMA(a.inv, log)
	log.Info("accelerators detected", "vendors", vendorsOf(a.inv),
		"silver_mps", a.silver.MPSControl, "silver_hami_core", a.silver.HAMiLib)
	if err := a.enroll(ctx); err != nil {
		return err
	}
	var err error
	if a.out, err = outbox.Open(filepath.Join(cfg.DataDir, "outbox"), 0); err != nil {
		return err
	}
	defer a.out.Close()
	a.self = newSelfMetrics(a)
	if a.st, err = state.Open(filepath.Join(cfg.DataDir, "state.json")); err != nil {
		return err
	}
	engine := cfg.ContainerRuntime
	switch engine {
	case "":
		engine = runner.DetectEngine()
	case "none":
		engine = ""
	}
	a.run = runner.New(runner.Config{LogDir: filepath.Join(cfg.DataDir, "tasks"), WorkDir: filepath.Join(cfg.DataDir, "work"),
		Grace: cfg.Grace, CLI: cfg.CLI, Engine: engine, RunAs: cfg.RunAs, Accounts: cfg.Accounts,
		AllowRoot: cfg.AllowRootTasks, PassEnv: cfg.TaskPassEnv, Silver: a.silver, Logger: log})
	a.run.SetRDMA(a.inv)
	if os.Geteuid() != 0 {
		log.Warn("the agent does not run as root: tasks run as its own account and could read its credentials; run it as root to sandbox tasks / 代理未以 root 运行：任务以同一账户运行")
	}
	if err := a.reconcileOrphans(ctx); err != nil {
		return err
	}
	var wg sync.WaitGroup
	spawn := func(f func(context.Context)) {
		wg.Add(1)
		go func() { defer wg.Done(); f(ctx) }()
	}
	spawn(func(ctx context.Context) {
		a.out.Run(ctx, a.sendStatus, 100, outbox.Backoff{Min: 200 * time.Millisecond, Max: 15 * time.Second}, log)
	})
	spawn(a.heartbeatLoop)
	spawn(a.pollLoop)
	spawn(a.policeLoop)
	spawn(a.certRenewLoop)
	if cfg.Collector {
		spawn(a.runCollector)
	}
	log.Info("agent running", "node", a.creds.NodeID, "server", cfg.Server)
	<-ctx.Done()
	wg.Wait()
	return nil
}

// enroll loads the stored credential or, the first time, trades the
// bootstrap token for one. Over HTTPS the request carries a CSR for a key
// made here; a server with mTLS signs it, and the node authenticates with
// that certificate from then on.
func (a *Agent) enroll(ctx context.Context) error {
	c, err := credentials.Load(a.cfg.DataDir)
	if err == nil {
		a.creds = c
		return a.connect(c)
	}
	if !errors.Is(err, credentials.ErrNotEnrolled) {
		return err
	}
	if a.cfg.Token == "" {
		return errors.New("not enrolled yet: pass --token with a bootstrap token / 尚未注册：请用 --token 提供引导令牌")
	}
	host := a.cfg.Name
	if host == "" {
		host, _ = os.Hostname()
	}
	req := protocol.EnrollRequest{Token: a.cfg.Token, Hostname: host, OS: runtime.GOOS, Arch: runtime.GOARCH,
		Version: a.cfg.Version, Labels: a.cfg.Labels, Inventory: a.inv}
	tc, err := a.cfg.tlsConfig(a.cfg.ServerFingerprint, nil, nil)
	if err != nil {
		return err
	}
	var keyPEM []byte
	if tc != nil {
		var csr []byte
		if keyPEM, csr, err = credentials.NewKeyAndCSR(host); err != nil {
			return err
		}
		req.CSR = string(csr)
	}
	var resp protocol.EnrollResponse
	cl := newClient(a.cfg.Server, "", a.cfg.PollWait, tc, a.cfg.LookupHost)
	backoff := outbox.Backoff{Min: time.Second, Max: 30 * time.Second}
	for {
		err := cl.do(ctx, "POST", "/api/v1/agents/enroll", req, &resp)
		if err == nil {
			break
		}
		if errors.Is(err, errPermanent) {
			return fmt.Errorf("enrollment refused / 注册被拒绝: %w", err)
		}
		if trustError(err) {
			return fmt.Errorf("server certificate not trusted (check --ca-file or --server-fingerprint) / 服务器证书不受信任: %w", err)
		}
		a.cfg.Logger.Warn("enrollment failed, retrying", "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff.Next()):
		}
	}
	// The certificate is saved before credentials.json: a crash in between
	// leaves an unenrolled node with a stray certificate (overwritten by
	// the next enrollment), never an enrolled node missing its certificate.
	if resp.Certificate != "" {
		if err := credentials.SaveCert(a.cfg.DataDir, []byte(resp.Certificate), keyPEM, []byte(resp.CABundle)); err != nil {
			return err
		}
	}
	a.creds = credentials.Credentials{Server: a.cfg.Server, NodeID: resp.NodeID, APIKey: resp.APIKey, EnrolledAt: time.Now().UTC(),
		ServerFingerprint: a.cfg.ServerFingerprint}
	if err := credentials.Save(a.cfg.DataDir, a.creds); err != nil {
		return err
	}
	a.sentAt = shape(a.inv)
	a.cfg.Logger.Info("enrolled", "node", resp.NodeID, "client_certificate", resp.Certificate != "")
	return a.connect(a.creds)
}

// connect builds the API client from the stored credential: the client
// certificate when the node has one (no API key on the wire), else the key.
func (a *Agent) connect(c credentials.Credentials) error {
	cert, ca, err := loadClientCert(a.cfg.DataDir)
	if err != nil {
		return err
	}
	pin := a.cfg.ServerFingerprint
	if pin == "" {
		pin = c.ServerFingerprint
	}
	tc, err := a.cfg.tlsConfig(pin, cert, ca)
	if err != nil {
		return err
	}
	if cert != nil && tc != nil {
		// Presented through the holder, so a renewal applies to the next
		// handshake without rebuilding the client.
		a.cert = newCertHolder(cert)
		tc.Certificates, tc.GetClientCertificate = nil, a.cert.get
	}
	a.cl = newClient(a.cfg.Server, c.APIKey, a.cfg.PollWait, tc, a.cfg.LookupHost)
	if a.cert != nil {
		a.cl.withCert()
	}
	return nil
}

// prepareDataDir creates the data folder: traversable by task accounts
// (0711) so they reach their own working directories under work/, not
// listable, and everything the agent keeps in it (credentials, keys,
// outbox, state, logs) 0600/0700 and owned by the agent.
func prepareDataDir(dir string) error {
	if err := os.MkdirAll(dir, 0o711); err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	if err := os.Chmod(dir, 0o711); err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	for _, sub := range []string{"tasks", "outbox", "logs"} {
		p := filepath.Join(dir, sub)
		if err := os.MkdirAll(p, 0o700); err != nil {
			return fmt.Errorf("data dir: %w", err)
		}
		if err := os.Chmod(p, 0o700); err != nil {
			return fmt.Errorf("data dir: %w", err)
		}
	}
	return nil
}

// reconcileOrphans applies the orphan policy (agent/state) to what a
// previous agent left: a task whose shim still runs is adopted and watched
// like one this agent started; a task that ended meanwhile is reported from
// its exit record; anything else is killed and reported as failed.
func (a *Agent) reconcileOrphans(ctx context.Context) error {
	adopted := map[string]*runner.Handle{}
	orphans, err := a.st.Reconcile(ctx, a.cfg.Grace, func(r state.Record) bool {
		h, err := a.run.Adopt(adoption(r))
		if err != nil {
			return false
		}
		adopted[r.Key()] = h
		return true
	})
	if err != nil {
		return err
	}
	for _, o := range orphans {
		if o.AssignmentID != 0 {
			a.handled[o.AssignmentID] = true
		}
		if o.Adopted {
			h := adopted[o.Key()]
			t := &task{spec: h.Spec(), h: h, shipped: map[string]int64{}}
			a.mu.Lock()
			a.tasks[key(o.TaskID, o.Attempt)] = t
			a.mu.Unlock()
			a.cfg.Logger.Info("orphan task adopted", "task", o.TaskID, "attempt", o.Attempt, "pid", o.PID)
			go a.watch(ctx, t)
			continue
		}
		u := protocol.StatusUpdate{TaskID: o.TaskID, Attempt: o.Attempt, Phase: protocol.PhaseFailed, At: time.Now().UTC()}
		if rec, err := runner.ReadExit(o.LogDir); err == nil && o.ShimPID != 0 && !o.WasRunning {
			// It ended while no agent was there: its real outcome.
			code := rec.ExitCode
			u.ExitCode = &code
			u.Reason = "ended while the agent was down"
			if code == 0 {
				u.Phase, u.Reason = protocol.PhaseSucceeded, ""
			} else {
				u.Reason = "exit code " + strconv.Itoa(code) + "; " + u.Reason
			}
			a.shipOrphanLogs(ctx, o.Record)
		} else {
			u.Reason = "agent restarted; the task's process had ended without a recorded exit"
			if o.WasRunning {
				u.Reason = "agent restarted; orphaned task process group killed (its shim or logs were gone)"
			}
			if o.KillErr != nil {
				u.Reason += " (kill: " + o.KillErr.Error() + ")"
			}
		}
		if o.WorkDir != "" {
			os.RemoveAll(o.WorkDir)
		}
		a.cfg.Logger.Warn("orphan task", "task", o.TaskID, "attempt", o.Attempt, "was_running", o.WasRunning, "phase", u.Phase)
		if _, err := a.out.Append(u); err != nil {
			return err
		}
	}
	for _, id := range a.st.Handled() {
		a.handled[id] = true
	}
	return nil
}

// adoption turns a state record into what the runner needs to adopt it.
func adoption(r state.Record) runner.Adoption {
	return runner.Adoption{Spec: protocol.TaskSpec{TaskID: r.TaskID, Attempt: r.Attempt, TimeoutSeconds: r.TimeoutSeconds,
		Devices: r.Devices}, PID: r.PID, ProcStart: r.ProcStart, ShimPID: r.ShimPID, ShimStart: r.ShimStart,
		StartedAt: r.StartedAt, LogDir: r.LogDir, WorkDir: r.WorkDir, Container: r.Container != ""}
}

func (a *Agent) sendStatus(ctx context.Context, batch []protocol.StatusUpdate) (uint64, error) {
	var ack protocol.StatusAck
	err := a.cl.do(ctx, "POST", "/api/v1/agents/status", protocol.StatusBatch{Updates: batch}, &ack)
	return ack.Acked, err
}

func (a *Agent) running() []protocol.RunningTask {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := []protocol.RunningTask{}
	for _, t := range a.tasks {
		out = append(out, protocol.RunningTask{TaskID: t.spec.TaskID, Attempt: t.spec.Attempt, PID: t.h.PID(),
			StartedAt: t.h.StartedAt(), TraceParent: t.trace})
	}
	return out
}

// heartbeatLoop re-reads the period each round, so a pushed config
// (heartbeat_interval) takes effect at the next beat.
func (a *Agent) heartbeatLoop(ctx context.Context) {
	for n := 0; ; n++ {
		a.heartbeat(ctx, n%a.cfg.InventoryEvery == 0 && n > 0)
		a.pushSelfMetrics(ctx)
		a.mu.Lock()
		period := a.cfg.Heartbeat
		a.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-time.After(period):
		}
	}
}

func (a *Agent) heartbeat(ctx context.Context, refresh bool) {
	if refresh {
		a.inv = detect(ctx, a.cfg.SMI, a.cfg.Logger)
		a.silver.Enforce(a.inv)
		attachRDMA(a.inv, a.cfg.Logger)
		a.run.SetRDMA(a.inv)
	}
	total, free := hostMemory()
	hb := protocol.Heartbeat{Health: "ok", CPUCount: runtime.NumCPU(), MemoryTotalMiB: total, MemoryFreeMiB: free,
		Running: a.running(), Version: a.cfg.Version}
	sh := shape(a.inv)
	if sh != a.sentAt {
		hb.Inventory = a.inv
	}
	var resp protocol.HeartbeatResponse
	if err := a.cl.do(ctx, "POST", "/api/v1/agents/heartbeat", hb, &resp); err != nil {
		a.self.inc("heteroflow_agent_heartbeats_sent_total", "result", "failed")
		if ctx.Err() == nil {
			a.cfg.Logger.Warn("heartbeat failed", "err", err)
		}
		return
	}
	a.sentAt = sh
	a.self.inc("heteroflow_agent_heartbeats_sent_total", "result", "ok")
	// Stop what the ledger no longer expects here (cancelled or moved while
	// this agent was cut off).
	want := map[string]bool{}
	for _, e := range resp.Expected {
		want[key(e.TaskID, e.Attempt)] = true
	}
	for _, r := range hb.Running {
		if !want[key(r.TaskID, r.Attempt)] {
			a.cancel(r.TaskID, r.Attempt, "the server no longer expects this task on this node")
		}
	}
}

func (a *Agent) cancel(id int64, attempt int, reason string) bool {
	a.mu.Lock()
	t, ok := a.tasks[key(id, attempt)]
	a.mu.Unlock()
	if ok {
		t.h.Cancel(reason)
	}
	return ok
}
