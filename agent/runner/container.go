package runner

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/heteroflow/heteroflow/agent/protocol"
	"github.com/heteroflow/heteroflow/receivers/vendorcatalog"
)

// Engines are the container runtimes the agent drives, in detection order.
var Engines = []string{"docker", "podman", "nerdctl"}

// DetectEngine returns the first of Engines on PATH, else "".
func DetectEngine() string {
	for _, e := range Engines {
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

// ContainerOptions are the sandbox parts of a container command line.
type ContainerOptions struct {
	// EnvFile holds the task's whole environment (--env-file): values never
	// appear on the command line, where any local user could read them.
	EnvFile string
	// WorkDir is bind-mounted at the same path and is the working directory.
	WorkDir string
	// Identity is the account the container's processes run as (--user),
	// unless it is root (allowed by the node) or the agent's own account
	// without root (rootless engines map it).
	Identity Identity
	// Mounts, IPCHost and DeviceNodes carry what the isolation needs (Prepared).
	Mounts      []string
	IPCHost     bool
	DeviceNodes []string
}

// ContainerArgv builds the `docker run --rm` (podman, nerdctl) command line
// for spec. devices are the prepared devices (partitions resolved).
//
// NVIDIA devices go through the engine's GPU support (`--gpus "device=…"` for
// docker and nerdctl, CDI `--device nvidia.com/gpu=…` for podman); other
// vendors get their /dev nodes plus the runtime hook's *_VISIBLE_DEVICES
// variable (in the env file). The container runs as the task's account with
// no-new-privileges, its working directory mounted, nothing else of the host.
func ContainerArgv(engine string, spec protocol.TaskSpec, devices []protocol.DeviceSlice, o ContainerOptions) []string {
	argv := []string{engine, "run", "--rm", "--init",
		"--name", ContainerName(spec.TaskID, spec.Attempt),
		"--label", "heteroflow.task=" + strconv.FormatInt(spec.TaskID, 10),
		"--label", "heteroflow.attempt=" + strconv.Itoa(spec.Attempt),
		"--security-opt", "no-new-privileges",
	}
	if o.Identity.Switch && o.Identity.UID != 0 {
		user := strconv.FormatUint(uint64(o.Identity.UID), 10) + ":" + strconv.FormatUint(uint64(o.Identity.GID), 10)
		argv = append(argv, "--user", user)
		for _, g := range o.Identity.Groups {
			argv = append(argv, "--group-add", strconv.FormatUint(uint64(g), 10))
		}
	}
	if o.WorkDir != "" {
		argv = append(argv, "-v", o.WorkDir+":"+o.WorkDir, "-w", o.WorkDir)
	}
	for _, m := range o.Mounts {
		argv = append(argv, "-v", m)
	}
	if o.IPCHost {
		argv = append(argv, "--ipc=host")
	}
	// Vendors whose engine GPU support selects devices (catalog GPUFlag:
	// NVIDIA) go through --gpus / CDI; the others get their /dev nodes, the
	// catalog's group and driver mounts, and the runtime hook's variable.
	gpus := map[string][]string{}
	var gpuVendors []string
	var others []protocol.DeviceSlice
	for _, d := range devices {
		e, _ := vendorcatalog.Lookup(d.Vendor)
		if e.Container.GPUFlag {
			if _, ok := gpus[e.ID]; !ok {
				gpuVendors = append(gpuVendors, e.ID)
			}
			gpus[e.ID] = append(gpus[e.ID], DeviceID(d))
		} else {
			others = append(others, d)
		}
	}
	for _, v := range gpuVendors {
		e, _ := vendorcatalog.Lookup(v)
		ids := gpus[v]
		if engine == "podman" {
			for _, id := range ids {
				argv = append(argv, "--device", e.Container.CDIKind+"="+id)
			}
		} else {
			// docker parses --gpus as CSV: the quotes keep the comma list together.
			argv = append(argv, "--gpus", `"device=`+strings.Join(ids, ",")+`"`)
		}
	}
	for _, n := range DeviceNodes(others) {
		argv = append(argv, "--device", n)
	}
	for _, n := range o.DeviceNodes {
		argv = appendOnce(argv, "--device", n)
	}
	for _, d := range others {
		e, _ := vendorcatalog.Lookup(d.Vendor)
		for _, g := range e.Container.GroupAdd {
			argv = appendOnce(argv, "--group-add", g)
		}
		for _, m := range e.Container.Mounts {
			argv = appendOnce(argv, "-v", m)
		}
	}
	if o.EnvFile != "" {
		argv = append(argv, "--env-file", o.EnvFile)
	}
	argv = append(argv, spec.Image)
	argv = append(argv, spec.Command...)
	return append(argv, spec.Args...)
}

// engineClientEnv are the agent variables the container engine's client
// needs to find its daemon; the client gets these and nothing else.
var engineClientEnv = []string{"DOCKER_HOST", "DOCKER_CONFIG", "DOCKER_CERT_PATH", "DOCKER_TLS_VERIFY",
	"DOCKER_CONTEXT", "CONTAINER_HOST", "CONTAINERS_CONF", "CONTAINERD_ADDRESS", "CONTAINERD_NAMESPACE",
	"XDG_RUNTIME_DIR", "HOME"}

func engineEnv() map[string]string {
	env := map[string]string{"PATH": os.Getenv("PATH")}
	if env["PATH"] == "" {
		env["PATH"] = DefaultTaskPath
	}
	for _, k := range engineClientEnv {
		if v, ok := os.LookupEnv(k); ok {
			env[k] = v
		}
	}
	return env
}

// writeEnvFile writes env in the engines' --env-file format (KEY=VALUE per
// line, taken literally) into the task's private folder, mode 0600. A value
// with a newline cannot be expressed there and is refused.
func writeEnvFile(dir string, env map[string]string) (string, error) {
	var b strings.Builder
	for _, kv := range EnvList(env) {
		if strings.ContainsAny(kv, "\n\r\x00") {
			k, _, _ := strings.Cut(kv, "=")
			return "", fmt.Errorf("env %s: a container task's variable cannot contain a newline or NUL", k)
		}
		b.WriteString(kv)
		b.WriteByte('\n')
	}
	p := filepath.Join(dir, "container.env")
	if err := writeFileAtomic(p, []byte(b.String())); err != nil {
		return "", fmt.Errorf("container env file: %w", err)
	}
	return p, nil
}

func appendOnce(argv []string, flag, value string) []string {
	for i := 0; i+1 < len(argv); i++ {
		if argv[i] == flag && argv[i+1] == value {
			return argv
		}
	}
	return append(argv, flag, value)
}
