package chaos

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// realAgent is an agent/daemon process (real tasks through the sandbox and
// the task shim), optionally inside a network namespace.
type realAgent struct {
	h      *Harness
	idx    int
	dir    string
	token  string
	server string
	netns  string
	cmd    *exec.Cmd
	logs   []string
}

func (r *realAgent) start() error {
	if err := os.MkdirAll(r.dir, 0o711); err != nil {
		return err
	}
	logPath := filepath.Join(r.h.opts.Dir, fmt.Sprintf("real-%d-%d.log", r.idx, len(r.logs)))
	lf, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer lf.Close()
	r.logs = append(r.logs, logPath)
	spec, _ := json.Marshal(childSpec{DataDir: filepath.Join(r.dir, "agent"), Server: r.server, Token: r.token})
	argv := []string{r.h.opts.Executable, roleAgent}
	if r.netns != "" {
		argv = append([]string{"ip", "netns", "exec", r.netns}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), envChild+"="+string(spec))
	cmd.Stdout, cmd.Stderr = lf, lf
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start real agent: %w", err)
	}
	r.cmd = cmd
	return nil
}

// kill9AndRestart kills the agent process with SIGKILL (its tasks live on
// under their shims) and starts it again on the same data folder.
func (r *realAgent) kill9AndRestart() error {
	_ = r.cmd.Process.Signal(syscall.SIGKILL)
	_ = r.cmd.Wait()
	time.Sleep(500 * time.Millisecond)
	return r.start()
}

func (r *realAgent) stop() {
	if r.cmd == nil || r.cmd.ProcessState != nil {
		return
	}
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = r.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = r.cmd.Process.Kill()
		<-done
	}
}
