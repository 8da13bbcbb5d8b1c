package runner

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/heteroflow/heteroflow/agent/procgroup"
)

// The task shim. The agent does not start a task itself: it starts a copy
// of its own executable with ShimArg, which starts the task as its child,
// owns the task's stdout/stderr pipes and writes the capped rotating logs,
// reaps the task and records its exit in ExitFile. The shim runs in its own
// session, so it and the task survive the agent being killed; a restarted
// agent adopts the task (same shim pid and start time, logs intact), keeps
// shipping its logs from the files and reports its real exit code.

// ShimArg as argv[1] turns any binary that links this package (heteroflow,
// test binaries) into the task shim; see init.
const ShimArg = "__heteroflow-task-shim"

// ExitFile is the file in a task's log folder where the shim records how
// the task ended.
const ExitFile = "exit.json"

// shimSpec is what the agent hands the shim on its stdin (never on the
// command line or in a file: the environment holds the task's secrets).
type shimSpec struct {
	Path         string   `json:"path"`
	Argv         []string `json:"argv"`
	Env          []string `json:"env"`
	Dir          string   `json:"dir"`
	Switch       bool     `json:"switch"`
	UID          uint32   `json:"uid"`
	GID          uint32   `json:"gid"`
	Groups       []uint32 `json:"groups,omitempty"`
	LogDir       string   `json:"log_dir"`
	SegmentBytes int64    `json:"segment_bytes"`
	Segments     int      `json:"segments"`
}

// shimHello is the shim's one line on stdout once the task started (or
// could not be started).
type shimHello struct {
	PID   int    `json:"pid,omitempty"`
	Error string `json:"error,omitempty"`
}

// ExitRecord is the content of ExitFile.
type ExitRecord struct {
	ExitCode   int       `json:"exit_code"`
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at"`
}

func init() {
	if len(os.Args) > 1 && os.Args[1] == ShimArg {
		os.Exit(shimMain(os.Stdin, os.Stdout))
	}
}

// shimMain is the shim process: read the spec, start the task, say its pid,
// copy its output into the logs, wait, record the exit.
func shimMain(in io.Reader, out *os.File) int {
	// The agent's terminal and its death must not stop the shim. Caught, not
	// ignored: an ignored signal stays ignored in the task after exec.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGHUP, syscall.SIGPIPE, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		for range sigs {
		}
	}()
	hello := func(h shimHello) {
		b, _ := json.Marshal(h)
		out.Write(append(b, '\n'))
		out.Close()
	}
	var spec shimSpec
	if err := json.NewDecoder(in).Decode(&spec); err != nil {
		hello(shimHello{Error: "task shim: bad spec: " + err.Error()})
		return 2
	}
	stdout, err := OpenLog(spec.LogDir, "stdout", spec.SegmentBytes, spec.Segments)
	if err != nil {
		hello(shimHello{Error: err.Error()})
		return 2
	}
	stderr, err := OpenLog(spec.LogDir, "stderr", spec.SegmentBytes, spec.Segments)
	if err != nil {
		stdout.Close()
		hello(shimHello{Error: err.Error()})
		return 2
	}
	cmd := &exec.Cmd{Path: spec.Path, Args: spec.Argv, Env: spec.Env, Dir: spec.Dir}
	procgroup.Prepare(cmd)
	setCredential(cmd, spec)
	var pipes [2]*os.File
	var wg sync.WaitGroup
	for i, l := range []*LogFile{stdout, stderr} {
		r, w, err := os.Pipe()
		if err != nil {
			hello(shimHello{Error: "pipe: " + err.Error()})
			return 2
		}
		pipes[i] = r
		if i == 0 {
			cmd.Stdout = w
		} else {
			cmd.Stderr = w
		}
		defer w.Close()
		wg.Add(1)
		go func(l *LogFile) {
			defer wg.Done()
			copyInto(r, l)
		}(l)
	}
	started := time.Now().UTC()
	if err := cmd.Start(); err != nil {
		hello(shimHello{Error: fmt.Sprintf("start %s: %v", spec.Argv[0], err)})
		return 2
	}
	cmd.Stdout.(*os.File).Close()
	cmd.Stderr.(*os.File).Close()
	hello(shimHello{PID: cmd.Process.Pid})
	werr := cmd.Wait()
	// A task's background children do not outlive it (they would hold
	// devices the ledger already gave back).
	_ = procgroup.Kill(cmd.Process.Pid)
	drained := make(chan struct{})
	go func() { wg.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(leftoverDrain):
		// A process that escaped the group (setsid) holds a pipe open.
		for _, p := range pipes {
			p.Close()
		}
		<-drained
	}
	stdout.Close()
	stderr.Close()
	rec := ExitRecord{ExitCode: exitCode(cmd, werr), StartedAt: started, FinishedAt: time.Now().UTC()}
	b, _ := json.Marshal(rec)
	if err := writeFileAtomic(filepath.Join(spec.LogDir, ExitFile), b); err != nil {
		fmt.Fprintln(os.Stderr, "task shim: record exit:", err)
		return 1
	}
	return 0
}

func copyInto(r *os.File, l *LogFile) {
	defer r.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if _, werr := l.Write(buf[:n]); werr != nil {
				fmt.Fprintln(os.Stderr, "task shim: log write:", werr)
			}
		}
		if err != nil {
			return
		}
	}
}

// writeFileAtomic writes path through a synced temporary file and a rename,
// so a reader sees the whole record or none.
func writeFileAtomic(path string, b []byte) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// ReadExit reads the exit record the shim left in logDir.
func ReadExit(logDir string) (ExitRecord, error) {
	var rec ExitRecord
	b, err := os.ReadFile(filepath.Join(logDir, ExitFile))
	if err != nil {
		return rec, err
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return rec, fmt.Errorf("%s: %w", ExitFile, err)
	}
	return rec, nil
}

// launchShim starts the shim for spec and returns it with the task's pid.
func launchShim(exe string, spec shimSpec) (*exec.Cmd, int, error) {
	cmd := exec.Command(exe, ShimArg)
	cmd.Env = []string{} // the shim needs nothing from the agent's environment
	detach(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, 0, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, 0, err
	}
	shimLog, err := os.OpenFile(filepath.Join(spec.LogDir, "shim.err"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, 0, err
	}
	defer shimLog.Close()
	cmd.Stderr = shimLog
	if err := cmd.Start(); err != nil {
		return nil, 0, fmt.Errorf("task shim: %w", err)
	}
	enc := json.NewEncoder(stdin)
	werr := enc.Encode(spec)
	stdin.Close()
	line, rerr := bufio.NewReader(stdout).ReadBytes('\n')
	var h shimHello
	if jerr := json.Unmarshal(line, &h); jerr != nil || h.PID == 0 {
		_ = cmd.Wait()
		switch {
		case h.Error != "":
			return nil, 0, errors.New(h.Error)
		case werr != nil:
			return nil, 0, fmt.Errorf("task shim: %w", werr)
		default:
			return nil, 0, fmt.Errorf("task shim ended without starting the task (%v)", errors.Join(rerr, jerr))
		}
	}
	return cmd, h.PID, nil
}
