package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/heteroflow/heteroflow/agent/procgroup"
	"github.com/heteroflow/heteroflow/agent/protocol"
)

// Config tunes a Runner. Zero values take the defaults in withDefaults.
type Config struct {
	LogDir          string        // per task: LogDir/<task>-<attempt>/{stdout,stderr}.<offset>.log
	LogSegmentBytes int64         // rotate a stream's file at this size
	LogSegments     int           // segments kept per stream (cap = size × count)
	Grace           time.Duration // SIGTERM → SIGKILL delay
	CLI             Commander     // vendor CLIs (and `docker stop`)
	Engine          string        // "docker", "podman", or "" to run images only when detected
	BaseEnv         []string      // environment tasks inherit; default os.Environ()
	Logger          *slog.Logger
}

func (c Config) withDefaults() Config {
	if c.LogDir == "" {
		c.LogDir = filepath.Join(os.TempDir(), "heteroflow-tasks")
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
	if c.BaseEnv == nil {
		c.BaseEnv = os.Environ()
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
}

// New returns a Runner.
func New(cfg Config) *Runner {
	cfg = cfg.withDefaults()
	return &Runner{cfg: cfg, iso: &Isolator{CLI: cfg.CLI, Logger: cfg.Logger}}
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
	taskEnv := map[string]string{}
	for k, v := range spec.Env {
		taskEnv[k] = v
	}
	// Ours win over the user's: a task must not widen its own visibility.
	for _, m := range []map[string]string{prep.Env, vis} {
		for k, v := range m {
			taskEnv[k] = v
		}
	}
	taskEnv["HETEROFLOW_TASK_ID"] = strconv.FormatInt(spec.TaskID, 10)
	taskEnv["HETEROFLOW_ATTEMPT"] = strconv.Itoa(spec.Attempt)
	taskEnv[protocol.OutputsEnv] = filepath.Join(r.cfg.LogDir, fmt.Sprintf("%d-%d", spec.TaskID, spec.Attempt), OutputsFile)

	var argv []string
	if container {
		argv = ContainerArgv(r.cfg.Engine, spec, prep.Devices, taskEnv)
	} else {
		argv = append(append([]string{}, spec.Command...), spec.Args...)
	}
	dir := filepath.Join(r.cfg.LogDir, fmt.Sprintf("%d-%d", spec.TaskID, spec.Attempt))
	h := &Handle{spec: spec, prep: prep, dir: dir, container: container, r: r, done: make(chan struct{})}
	if h.stdout, err = OpenLog(dir, "stdout", r.cfg.LogSegmentBytes, r.cfg.LogSegments); err != nil {
		return nil, err
	}
	if h.stderr, err = OpenLog(dir, "stderr", r.cfg.LogSegmentBytes, r.cfg.LogSegments); err != nil {
		h.stdout.Close()
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = mergeEnv(r.cfg.BaseEnv, taskEnv, container)
	procgroup.Prepare(cmd)
	h.Env = cmd.Env
	if err := h.startProcess(cmd); err != nil {
		h.stdout.Close()
		h.stderr.Close()
		return nil, err
	}
	if spec.TimeoutSeconds > 0 {
		h.timer = time.AfterFunc(time.Duration(spec.TimeoutSeconds)*time.Second, func() {
			h.stop(protocol.PhaseTimedOut, fmt.Sprintf("timeout after %ds", spec.TimeoutSeconds))
		})
	}
	go h.wait(cmd)
	r.cfg.Logger.Info("task started", "task", spec.TaskID, "attempt", spec.Attempt, "pid", h.pid,
		"container", container, "devices", len(prep.Devices))
	return h, nil
}

// mergeEnv returns base with overrides applied. For containers the task
// variables travel as -e flags, so the engine client keeps the agent's env.
func mergeEnv(base []string, over map[string]string, container bool) []string {
	if container {
		return append([]string(nil), base...)
	}
	out := make([]string, 0, len(base)+len(over))
	for _, kv := range base {
		k := kv
		for i := 0; i < len(kv); i++ {
			if kv[i] == '=' {
				k = kv[:i]
				break
			}
		}
		if _, ok := over[k]; !ok {
			out = append(out, kv)
		}
	}
	keys := make([]string, 0, len(over))
	for k := range over {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, k+"="+over[k])
	}
	return out
}

// startProcess wires stdout/stderr through pipes into the rotating logs.
func (h *Handle) startProcess(cmd *exec.Cmd) error {
	type pipe struct{ r, w *os.File }
	var ps [2]pipe
	for i := range ps {
		r, w, err := os.Pipe()
		if err != nil {
			return fmt.Errorf("pipe: %w", err)
		}
		ps[i] = pipe{r, w}
	}
	cmd.Stdout, cmd.Stderr = ps[0].w, ps[1].w
	err := cmd.Start()
	// The child holds its own copies of the write ends.
	ps[0].w.Close()
	ps[1].w.Close()
	if err != nil {
		ps[0].r.Close()
		ps[1].r.Close()
		return fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	h.pid = cmd.Process.Pid
	h.startedAt = time.Now()
	h.copies.Add(2)
	h.pipes = []*os.File{ps[0].r, ps[1].r}
	go h.copy(ps[0].r, h.stdout)
	go h.copy(ps[1].r, h.stderr)
	return nil
}

func (h *Handle) copy(r *os.File, l *LogFile) {
	defer h.copies.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if _, werr := l.Write(buf[:n]); werr != nil {
				h.r.cfg.Logger.Warn("task log write failed", "task", h.spec.TaskID, "err", werr)
			}
		}
		if err != nil {
			return
		}
	}
}

// Handle is a started task.
type Handle struct {
	// Env is the environment the process was started with (for tests and
	// the agent-status report).
	Env []string

	spec      protocol.TaskSpec
	prep      *Prepared
	dir       string
	container bool
	r         *Runner
	pid       int
	startedAt time.Time
	stdout    *LogFile
	stderr    *LogFile
	pipes     []*os.File
	copies    sync.WaitGroup
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
func (h *Handle) LogSize(stream string) int64 {
	if stream == "stderr" {
		return h.stderr.Size()
	}
	return h.stdout.Size()
}

// Done is closed when the task has ended and its isolation is removed.
func (h *Handle) Done() <-chan struct{} { return h.done }

// Wait blocks until the task ends and returns how.
func (h *Handle) Wait() Result {
	<-h.done
	return h.result
}

// Cancel stops the task (SIGTERM to its group, SIGKILL after the grace).
func (h *Handle) Cancel(reason string) { h.stop(protocol.PhaseCancelled, reason) }
