package runner

import (
	"os/exec"
	"sort"
	"strconv"
	"strings"

	"github.com/heteroflow/heteroflow/agent/protocol"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// DetectEngine returns "docker" or "podman" when one is on PATH, else "".
func DetectEngine() string {
	for _, e := range []string{"docker", "podman"} {
		if _, err := exec.LookPath(e); err == nil {
			return e
		}
	}
	return ""
}

// ContainerName is the name the agent gives a task's container, so that a
// cancel can `docker stop` it and a restarted agent can find it.
func ContainerName(taskID int64, attempt int) string {
	return "heteroflow-task-" + strconv.FormatInt(taskID, 10) + "-" + strconv.Itoa(attempt)
}

// ContainerArgv builds the `docker run --rm` (or podman) command line for
// spec. devices are the prepared devices (partitions resolved); env holds the
// task's variables already merged with the container visibility and limit
// variables.
//
// NVIDIA devices go through the engine's GPU support (`--gpus "device=…"` for
// docker, CDI `--device nvidia.com/gpu=…` for podman); other vendors get their
// /dev nodes plus the runtime hook's *_VISIBLE_DEVICES variable.
func ContainerArgv(engine string, spec protocol.TaskSpec, devices []protocol.DeviceSlice, env map[string]string) []string {
	argv := []string{engine, "run", "--rm", "--init",
		"--name", ContainerName(spec.TaskID, spec.Attempt),
		"--label", "heteroflow.task=" + strconv.FormatInt(spec.TaskID, 10),
		"--label", "heteroflow.attempt=" + strconv.Itoa(spec.Attempt),
	}
	var nvidia, others []protocol.DeviceSlice
	for _, d := range devices {
		if d.Vendor == inventory.VendorNVIDIA {
			nvidia = append(nvidia, d)
		} else {
			others = append(others, d)
		}
	}
	if len(nvidia) > 0 {
		ids := make([]string, len(nvidia))
		for i, d := range nvidia {
			ids[i] = uuidOrIndex(d)
		}
		if engine == "podman" {
			for _, id := range ids {
				argv = append(argv, "--device", "nvidia.com/gpu="+id)
			}
		} else {
			// docker parses --gpus as CSV: the quotes keep the comma list together.
			argv = append(argv, "--gpus", `"device=`+strings.Join(ids, ",")+`"`)
		}
	}
	for _, n := range DeviceNodes(others) {
		argv = append(argv, "--device", n)
	}
	for _, d := range others {
		switch d.Vendor {
		case inventory.VendorAMD, inventory.VendorHygon:
			argv = appendOnce(argv, "--group-add", "video")
		case inventory.VendorAscend:
			argv = appendOnce(argv, "-v", "/usr/local/Ascend/driver:/usr/local/Ascend/driver:ro")
		}
	}
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		argv = append(argv, "-e", k+"="+env[k])
	}
	argv = append(argv, spec.Image)
	argv = append(argv, spec.Command...)
	return append(argv, spec.Args...)
}

func appendOnce(argv []string, flag, value string) []string {
	for i := 0; i+1 < len(argv); i++ {
		if argv[i] == flag && argv[i+1] == value {
			return argv
		}
	}
	return append(argv, flag, value)
}
