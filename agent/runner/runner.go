package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/heteroflow/heteroflow/agent/procgroup"
	"github.com/heteroflow/heteroflow/agent/protocol"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// Config tunes a Runner. Zero values take the defaults in withDefaults.
type Config struct {
	LogDir          string        // per task: LogDir/<task>-<attempt>/{stdout,stderr}.<offset>.log, agent-only (0700)
	WorkDir         string        // per task: WorkDir/<task>-<attempt>, 0700, owned by the task's account
	LogSegmentBytes int64         // rotate a stream's file at this size
	LogSegments     int           // segments kept per stream (cap = size × count)
	Grace           time.Duration // SIGTERM → SIGKILL delay
	CLI             Commander     // vendor CLIs (and `docker stop`)
	Engine          string        // "docker", "podman", "nerdctl", or "" to run images only when detected
	// RunAs is the local account tasks run as (name or uid). Empty: the
	// agent's own account, or DefaultRunAs when the agent runs as root.
	RunAs string
	// Accounts maps "user:<owner>" and "tenant:<tenant>" to local accounts
	// (a user mapping wins over a tenant mapping, both over RunAs).
	Accounts map[string]string
	// AllowRoot lets a task run as uid 0; never by default.
	AllowRoot bool
	// PassEnv names agent environment variables tasks receive (a proxy,
	// say); none by default.
	PassEnv []string
	// ShimPath is the executable started as the task shim (ShimArg);
	// default: this process's own executable.
	ShimPath string
	// Silver is what the node enforces for QoS Silver (DetectSilver).
	Silver Silver
	Logger *slog.Logger
}

func (c Config) withDefaults() Config {
	if c.LogDir == "" {
		c.LogDir = filepath.Join(os.TempDir(), "heteroflow-tasks")
	}
	if c.WorkDir == "" {
		c.WorkDir = filepath.Join(filepath.Dir(c.LogDir), "work")
	}
	if c.LogSegmentBytes <= 0 {
		c.LogSegmentBytes = 8 << 20
	}
	if c.LogSegments <= 0 {
		c.LogSegments = 4
	}
	if c.Grace <= 0 {
		c.Grace = 10 * time.Second
	}
	if c.CLI == nil {
		c.CLI = ExecCommander{}
	}
	if c.ShimPath == "" {
		if exe, err := os.Executable(); err == nil {
			c.ShimPath = exe
		}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Runner starts tasks. It is safe for concurrent use.
type Runner struct {
	cfg Config
	iso *Isolator

	rdmaMu sync.Mutex
	rdma   map[string][]inventory.RDMADevice // per vendor, with affinity
}

// SetRDMA records the node's RDMA adapters (from the inventory snapshots,
// per vendor with their affinity to its devices) for the tasks' collective
// library variables (RDMAEnv).
func (r *Runner) SetRDMA(inv []inventory.Snapshot) {
	m := map[string][]inventory.RDMADevice{}
	for _, s := range inv {
		m[s.Vendor] = s.RDMA
	}
	r.rdmaMu.Lock()
	r.rdma = m
	r.rdmaMu.Unlock()
}

// New returns a Runner.
func New(cfg Config) *Runner {
	cfg = cfg.withDefaults()
	return &Runner{cfg: cfg, iso: &Isolator{CLI: cfg.CLI, Logger: cfg.Logger, Silver: cfg.Silver}}
}

// Result is how a task ended.
type Result struct {
	Phase      string // protocol.PhaseSucceeded/Failed/Cancelled/TimedOut
	ExitCode   *int
	Reason     string
	StartedAt  time.Time
	FinishedAt time.Time
}

// Start prepares isolation, starts the task and returns at once. The task's
// end (exit, timeout, cancel) is reported by Handle.Wait. ctx only bounds
// the preparation (vendor CLI calls); the task outlives it.
func (r *Runner) Start(ctx context.Context, spec protocol.TaskSpec) (*Handle, error) {
	if len(spec.Command) == 0 && spec.Image == "" {
		return nil, errors.New("task has neither command nor image")
	}
	container := spec.Image != "" && r.cfg.Engine != ""
	if spec.Image != "" && !container && len(spec.Command) == 0 {
		return nil, fmt.Errorf("task names image %s but neither docker nor podman is on PATH", spec.Image)
	}
	prep, err := r.iso.Prepare(ctx, spec.QoS, spec.Devices)
	if err != nil {
		return nil, fmt.Errorf("isolation: %w", err)
	}
	h, err := r.start(spec, prep, container)
	if err != nil {
		if rerr := prep.Release(context.WithoutCancel(ctx)); rerr != nil {
			err = errors.Join(err, rerr)
		}
		return nil, err
	}
	return h, nil
}

func (r *Runner) start(spec protocol.TaskSpec, prep *Prepared, container bool) (*Handle, error) {
	vis, err := VisibilityEnv(prep.Devices, container)
	if err != nil {
		return nil, err
	}
	r.rdmaMu.Lock()
	rdmaEnv := RDMAEnv(prep.Devices, r.rdma)
	r.rdmaMu.Unlock()
	for k, v := range rdmaEnv {
		if _, set := spec.Env[k]; !set { // the task's own choice wins
			vis[k] = v
		}
	}
	id, err := r.identity(spec)
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("%d-%d", spec.TaskID, spec.Attempt)
	if err := os.MkdirAll(r.cfg.LogDir, 0o700); err != nil {
		return nil, fmt.Errorf("log dir: %w", err)
	}
	logDir := filepath.Join(r.cfg.LogDir, name)
	if err := os.MkdirAll(logDir, 0o700); err != nil {
		return nil, fmt.Errorf("log dir: %w", err)
	}
	os.Remove(filepath.Join(logDir, ExitFile)) // an earlier start of this attempt
	workDir, err := makeWorkDir(r.cfg.WorkDir, name, id)
	if err != nil {
		return nil, err
	}
	env := TaskEnv(spec, id, workDir, r.cfg.PassEnv, prep.Env, vis, container)
	h := &Handle{spec: spec, prep: prep, dir: logDir, workDir: workDir, container: container, r: r, done: make(chan struct{})}
	ss := shimSpec{Dir: workDir, LogDir: logDir, SegmentBytes: r.cfg.LogSegmentBytes, Segments: r.cfg.LogSegments}
	if container {
		// The engine client runs as the agent's user with a minimal
		// environment of its own; the task's variables reach the container
		// through a private env file, never through the client's
		// environment (LD_PRELOAD, DOCKER_HOST) or its command line.
		if h.envFile, err = writeEnvFile(logDir, env); err != nil {
			os.RemoveAll(workDir)
			return nil, err
		}
		ss.Argv = ContainerArgv(r.cfg.Engine, spec, prep.Devices, ContainerOptions{EnvFile: h.envFile, WorkDir: workDir, Identity: id,
			Mounts: prep.Mounts, IPCHost: prep.IPCHost, DeviceNodes: prep.DeviceNodes})
		ss.Env = EnvList(engineEnv())
	} else {
		ss.Argv = append(append([]string{}, spec.Command...), spec.Args...)
		ss.Env = EnvList(env)
		ss.Switch, ss.UID, ss.GID, ss.Groups = id.Switch, id.UID, id.GID, id.Groups
	}
	if ss.Path, err = lookPath(ss.Argv[0], pathOf(ss.Env)); err != nil {
		h.cleanup()
		return nil, err
	}
	h.Env = EnvList(env)
	h.Identity = id
	if r.cfg.ShimPath == "" {
		h.cleanup()
		return nil, errors.New("task shim: cannot find the agent's own executable")
	}
	shim, pid, err := launchShim(r.cfg.ShimPath, ss)
	if err != nil {
		h.cleanup()
		return nil, err
	}
	h.shim, h.pid = shim, pid
	h.shimPID = shim.Process.Pid
	h.shimStart, _ = procgroup.StartTime(h.shimPID)
	h.procStart, _ = procgroup.StartTime(pid)
	h.startedAt = time.Now()
	h.armTimeout(spec.TimeoutSeconds)
	go h.wait()
	r.cfg.Logger.Info("task started", "task", spec.TaskID, "attempt", spec.Attempt, "pid", h.pid,
		"user", id.Name, "uid", id.UID, "container", container, "devices", len(prep.Devices))
	return h, nil
}

func pathOf(env []string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			return v
		}
	}
	return DefaultTaskPath
}

// armTimeout stops the task once it ran timeoutSeconds since it started.
func (h *Handle) armTimeout(timeoutSeconds int) {
	if timeoutSeconds <= 0 {
		return
	}
	left := time.Until(h.startedAt.Add(time.Duration(timeoutSeconds) * time.Second))
	h.timer = time.AfterFunc(max(left, 0), func() {
		h.stop(protocol.PhaseTimedOut, fmt.Sprintf("timeout after %ds", timeoutSeconds))
	})
}

// cleanup removes what a start left behind when it fails or the task ended:
// the working directory and the container env file.
func (h *Handle) cleanup() {
	if h.envFile != "" {
		os.Remove(h.envFile)
	}
	if h.workDir != "" {
		if err := os.RemoveAll(h.workDir); err != nil {
			h.r.cfg.Logger.Warn("task work dir not removed", "task", h.spec.TaskID, "err", err)
		}
	}
}

// Adoption is what a restarted agent knows about a task a previous agent
// started (agent/state): enough to watch its shim and stop it.
type Adoption struct {
	Spec      protocol.TaskSpec // task id, attempt, timeout, devices
	PID       int               // the task's pid and process group
	ProcStart uint64
	ShimPID   int
	ShimStart uint64
	StartedAt time.Time
	LogDir    string
	WorkDir   string
	Container bool
}

// Adoptable reports whether a's shim still runs (same pid and start time)
// and the task's log folder is intact, so the task can be adopted.
func Adoptable(a Adoption) (bool, string) {
	if a.ShimPID == 0 {
		return false, "started without a task shim"
	}
	if !procgroup.Running(a.ShimPID, a.ShimStart) {
		return false, "its task shim is gone"
	}
	for _, stream := range []string{"stdout", "stderr"} {
		if segs, err := segments(a.LogDir, stream); err != nil || len(segs) == 0 {
			return false, "its " + stream + " log is missing"
		}
	}
	return true, ""
}

// Adopt takes over a task whose shim outlived the previous agent: the
// handle follows the shim until it exits, applies the rest of the timeout
// and reads the recorded exit code. Isolation created by the previous agent
// is not known to this one.
func (r *Runner) Adopt(a Adoption) (*Handle, error) {
	if ok, why := Adoptable(a); !ok {
		return nil, errors.New("cannot adopt: " + why)
	}
	h := &Handle{spec: a.Spec, prep: &Prepared{Devices: a.Spec.Devices}, dir: a.LogDir, workDir: a.WorkDir,
		container: a.Container, r: r, done: make(chan struct{}), pid: a.PID, procStart: a.ProcStart,
		shimPID: a.ShimPID, shimStart: a.ShimStart, startedAt: a.StartedAt, Adopted: true}
	h.armTimeout(a.Spec.TimeoutSeconds)
	go h.wait()
	r.cfg.Logger.Info("task adopted", "task", a.Spec.TaskID, "attempt", a.Spec.Attempt, "pid", a.PID)
	return h, nil
}

// Handle is a started task.
type Handle struct {
	// Env is the task's environment (secrets included: never log it).
	Env []string
	// Identity is the account the task runs as.
	Identity Identity
	// Adopted is true for a task started by a previous agent.
	Adopted bool

	spec      protocol.TaskSpec
	prep      *Prepared
	dir       string // private: logs, exit record, env file
	workDir   string
	envFile   string
	container bool
	r         *Runner
	pid       int
	procStart uint64
	shim      *exec.Cmd // nil when adopted
	shimPID   int
	shimStart uint64
	startedAt time.Time
	timer     *time.Timer

	mu        sync.Mutex
	stopPhase string
	stopWhy   string
	done      chan struct{}
	result    Result
}

// PID is the task's main process id (and its process group id on Unix).
func (h *Handle) PID() int { return h.pid }

// StartedAt is when the process started.
func (h *Handle) StartedAt() time.Time { return h.startedAt }

// LogDir is the folder holding the task's stdout/stderr segments.
func (h *Handle) LogDir() string { return h.dir }

// Spec is the task as started (devices with partitions resolved).
func (h *Handle) Spec() protocol.TaskSpec {
	s := h.spec
	s.Devices = h.prep.Devices
	return s
}

// LogSize returns the bytes written so far to stream ("stdout"|"stderr").
func (h *Handle) LogSize(stream string) int64 { return StreamSize(h.dir, stream) }

// WorkDir is the task's working directory (its HOME).
func (h *Handle) WorkDir() string { return h.workDir }

// Shim returns the task shim's pid and start time, which identify it to a
// restarted agent.
func (h *Handle) Shim() (pid int, start uint64) { return h.shimPID, h.shimStart }

// ProcStart is the task process's start time (clock ticks, Linux).
func (h *Handle) ProcStart() uint64 { return h.procStart }

// Container reports whether the task runs in a container.
func (h *Handle) Container() bool { return h.container }

// Done is closed when the task has ended and its isolation is removed.
func (h *Handle) Done() <-chan struct{} { return h.done }

// Wait blocks until the task ends and returns how.
func (h *Handle) Wait() Result {
	<-h.done
	return h.result
}

// Cancel stops the task (SIGTERM to its group, SIGKILL after the grace).
func (h *Handle) Cancel(reason string) { h.stop(protocol.PhaseCancelled, reason) }

// Finished returns a handle on a task that already ended (its log folder
// only), for shipping the logs it left.
func Finished(spec protocol.TaskSpec, logDir string) *Handle {
	h := &Handle{spec: spec, prep: &Prepared{}, dir: logDir, done: make(chan struct{})}
	close(h.done)
	return h
}
