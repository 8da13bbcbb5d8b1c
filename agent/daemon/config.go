package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"time"

	"github.com/heteroflow/heteroflow/agent/runner"
	"github.com/heteroflow/heteroflow/receivers/smi"
)

// Config is the agent's configuration; Defaults fills the zero fields.
type Config struct {
	// Server is the control plane's API URL, http(s)://host:3333, or a
	// comma list of its servers (HA); a name that resolves to several
	// addresses counts as one server per address. The agent fails over
	// between them (ServerList).
	Server string
	// LookupHost resolves server names (nil = the system resolver).
	LookupHost func(ctx context.Context, host string) ([]string, error)
	Token      string // bootstrap token, only needed until enrolled
	// CAFile is a PEM bundle trusted for the server's HTTPS certificate
	// instead of the system roots (a private or self-signed server CA).
	CAFile string
	// ServerFingerprint pins the server certificate by the SHA-256 of its
	// DER (hex, colons allowed), for a first enrollment against a
	// self-signed server without a CA file. Stored with the credentials.
	ServerFingerprint string
	DataDir           string // credentials, outbox, state, task logs
	// Name is the node's name at enrollment (its id is the name plus a
	// random suffix); empty uses the host name.
	Name string
	// Heartbeat is the heartbeat period (default 10 s).
	Heartbeat time.Duration
	// PollWait is the assignment long-poll duration (default 30 s).
	PollWait time.Duration
	// InventoryEvery re-reads the vendor CLIs every this many heartbeats.
	InventoryEvery int
	// Collector runs the embedded OTel collector exporting to the server.
	Collector bool
	// SimulatedLoad, when set, receives each device's load implied by the
	// running tasks whenever they change, so that a node whose vendor CLIs
	// are simulated (make run, tests) reports utilisation and memory that
	// follow its work. Real nodes leave it nil: their CLIs measure.
	SimulatedLoad func(map[int]DeviceLoad) error
	Labels        map[string]string
	Grace         time.Duration // SIGTERM → SIGKILL for tasks
	Version       string
	Logger        *slog.Logger
	// AgentLog is the agent's own capped log (AgentLogDir, stream "agent"),
	// returned by the agent-logs management command.
	AgentLog    *runner.LogFile
	AgentLogDir string
	// Task sandbox (agent/runner): RunAs is the node's account for tasks
	// (default: nobody when the agent runs as root, else the agent's own),
	// Accounts maps "user:NAME"/"tenant:NAME" to local accounts, AllowRootTasks
	// permits uid 0, TaskPassEnv names agent variables tasks receive, and
	// ContainerRuntime picks docker/podman/nerdctl ("" detects, "none" never).
	RunAs            string
	Accounts         map[string]string
	AllowRootTasks   bool
	TaskPassEnv      []string
	ContainerRuntime string
	// SMI runs vendor CLIs for inventory; CLI runs them for isolation.
	SMI smi.Runner
	CLI runner.Commander
}

// Defaults returns c with defaults applied.
func (c Config) Defaults() Config {
	if c.Heartbeat <= 0 {
		c.Heartbeat = 10 * time.Second
	}
	if c.PollWait <= 0 {
		c.PollWait = 30 * time.Second
	}
	if c.InventoryEvery <= 0 {
		c.InventoryEvery = 6
	}
	if c.Grace <= 0 {
		c.Grace = 10 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.SMI == nil {
		c.SMI = smi.ExecRunner
	}
	if c.CLI == nil {
		c.CLI = runner.ExecCommander{}
	}
	if c.Version == "" {
		c.Version = "dev"
	}
	return c
}

// Validate reports every bad field.
var nodeName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

func (c Config) Validate() error {
	var errs []error
	u, err := c.checkServers()
	if err != nil {
		errs = append(errs, err)
	}
	if c.DataDir == "" {
		errs = append(errs, errors.New("--data-dir is required / 需要数据目录"))
	}
	if c.Name != "" && !nodeName.MatchString(c.Name) {
		errs = append(errs, fmt.Errorf("--name %q must be 1–63 letters, digits, '.', '_' or '-', starting with a letter or digit / 节点名无效", c.Name))
	}
	if err := runner.ValidateAccounts(c.RunAs, c.Accounts, c.AllowRootTasks); err != nil {
		errs = append(errs, err)
	}
	switch c.ContainerRuntime {
	case "", "none", "docker", "podman", "nerdctl":
	default:
		errs = append(errs, fmt.Errorf("--container-runtime %q: use docker, podman, nerdctl or none / 容器运行时无效", c.ContainerRuntime))
	}
	if c.ServerFingerprint != "" {
		if _, err := parseFingerprint(c.ServerFingerprint); err != nil {
			errs = append(errs, err)
		}
	}
	if (c.CAFile != "" || c.ServerFingerprint != "") && err == nil && u.Scheme != "https" {
		errs = append(errs, fmt.Errorf("--ca-file and --server-fingerprint need an https:// --server, not %q / 需要 https 服务器地址", c.Server))
	}
	return errors.Join(errs...)
}
