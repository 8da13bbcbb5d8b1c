package fakesmi

import (
	"fmt"
	"io"
	"strings"
)

// MPSDaemon is one simulated CUDA MPS control daemon: its pipe directory
// (what clients connect through) and the devices it was started with.
type MPSDaemon struct {
	PipeDir string `json:"pipe_dir"`
	Devices string `json:"devices"` // CUDA_VISIBLE_DEVICES at start
}

// mpsControl simulates nvidia-cuda-mps-control: `-d` starts a daemon for
// CUDA_MPS_PIPE_DIRECTORY (one per directory, as the real one refuses a
// second), and commands on standard input talk to the daemon of that
// directory; `quit` stops it. Other commands the real daemon takes
// (get_server_list, set_default_active_thread_percentage, …) answer like a
// daemon with no clients.
func mpsControl(w io.Writer, p *Profile, args []string, pipeDir, devices, stdin, statePath string) error {
	if pipeDir == "" {
		pipeDir = "/tmp/nvidia-mps" // the daemon's default
	}
	if has(args, "-d") {
		return UpdateState(statePath, func(st *State) error {
			for _, d := range st.MPS {
				if d.PipeDir == pipeDir {
					return fmt.Errorf("An instance of this daemon is already running")
				}
			}
			if err := validUUIDs(p, devices); err != nil {
				return err
			}
			st.MPS = append(st.MPS, MPSDaemon{PipeDir: pipeDir, Devices: devices})
			return nil
		})
	}
	if len(args) > 0 {
		return usageError("nvidia-cuda-mps-control", args)
	}
	return UpdateState(statePath, func(st *State) error {
		at := -1
		for i, d := range st.MPS {
			if d.PipeDir == pipeDir {
				at = i
			}
		}
		if at < 0 {
			return fmt.Errorf("Cannot find MPS control daemon process")
		}
		for _, line := range strings.Split(stdin, "\n") {
			switch cmd := strings.TrimSpace(line); {
			case cmd == "":
			case cmd == "quit":
				st.MPS = append(st.MPS[:at], st.MPS[at+1:]...)
				return nil
			case cmd == "get_server_list":
			case strings.HasPrefix(cmd, "set_default_"), strings.HasPrefix(cmd, "get_default_"):
				fmt.Fprintln(w, "0")
			default:
				return fmt.Errorf("unknown command %q", cmd)
			}
		}
		return nil
	})
}

// validUUIDs checks that every id in CUDA_VISIBLE_DEVICES names a GPU of
// the simulated node (by UUID or index).
func validUUIDs(p *Profile, devices string) error {
	if devices == "" {
		return nil
	}
	for _, id := range strings.Split(devices, ",") {
		ok := false
		for i := 0; i < p.Count; i++ {
			if id == uuid("GPU", p.Model, i) || id == fmt.Sprint(i) {
				ok = true
			}
		}
		if !ok {
			return fmt.Errorf("CUDA_VISIBLE_DEVICES: no GPU %q on this node", id)
		}
	}
	return nil
}
