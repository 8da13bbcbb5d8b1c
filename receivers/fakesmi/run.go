package fakesmi

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/heteroflow/heteroflow/receivers/nvidiasmireceiver"
	"github.com/heteroflow/heteroflow/receivers/rocmsmireceiver"
	"github.com/heteroflow/heteroflow/receivers/vendorcatalog"
)

// Tools lists every tool name fakesmi can impersonate: every CLI of the
// vendor catalog (TestEveryCatalogCLIIsSimulated keeps it so).
var Tools = append(vendorcatalog.ToolNames(), vendorcatalog.SilverToolNames()...)

// ErrUsage means the arguments are not a form this tool simulates.
var ErrUsage = errors.New("unsupported arguments")

// Env names the environment variables the wrapper scripts set.
const (
	EnvProfile = "HETEROFLOW_FAKESMI_PROFILE"
	EnvState   = "HETEROFLOW_FAKESMI_STATE"
	EnvLog     = "HETEROFLOW_FAKESMI_LOG"
)

// Options are what one invocation needs.
type Options struct {
	Profile   *Profile
	StatePath string
	LogPath   string
	Now       func() time.Time
	// Env is the invocation's environment ("K=V"); the device-selection and
	// isolation variables in it (CUDA_*, *_VISIBLE_DEVICES, LD_PRELOAD) are
	// logged, and the MPS control daemon reads its pipe directory there.
	Env []string
	// Stdin feeds commands to tools that read them (nvidia-cuda-mps-control).
	Stdin io.Reader
}

// Run prints what tool would print for args. A tool of another vendor than
// the profile's behaves as not installed would: it fails.
func Run(w io.Writer, o Options, tool string, args []string) error {
	if o.Now == nil {
		o.Now = time.Now
	}
	var stdin []byte
	if tool == "nvidia-cuda-mps-control" && o.Stdin != nil && !has(args, "-d") {
		b, err := io.ReadAll(io.LimitReader(o.Stdin, 1<<16))
		if err != nil {
			return fmt.Errorf("%s: stdin: %w", tool, err)
		}
		stdin = b
	}
	if err := appendLog(o.LogPath, Invocation{Tool: tool, Args: args, Env: loggedEnv(o.Env), Stdin: string(stdin)}, o.Now()); err != nil {
		return err
	}
	v := vendorcatalog.ToolVendor(tool)
	if v == "" {
		return fmt.Errorf("fakesmi: unknown tool %q (known: %s)", tool, strings.Join(Tools, ", "))
	}
	p := o.Profile
	if v != p.Vendor {
		return fmt.Errorf("%s: no %s devices on this simulated node (profile vendor %s)", tool, v, p.Vendor)
	}
	s, err := LoadState(o.StatePath)
	if err != nil {
		return err
	}
	switch tool {
	case "nvidia-smi":
		return nvidiaSMI(w, p, s, args, o.StatePath)
	case "nvidia-cuda-mps-control":
		return mpsControl(w, p, args, envValue(o.Env, "CUDA_MPS_PIPE_DIRECTORY"), envValue(o.Env, "CUDA_VISIBLE_DEVICES"), string(stdin), o.StatePath)
	case "rocm-smi", "hy-smi":
		if tool == "hy-smi" && len(args) > 0 && args[0] == "virtual" {
			return hyVirtual(w, p, s, args[1:], o.StatePath)
		}
		if has(args, "--json") {
			return rocmJSON(w, p, s, tool == "hy-smi")
		}
	case "npu-smi":
		return npuSMI(w, p, s, args, o.StatePath)
	case "cnmon":
		if len(args) == 0 {
			return cnmon(w, p, s)
		}
	case "xpu-smi":
		if has(args, "-m") {
			return xpuMachine(w, p, s)
		}
	case "xpu_smi":
		if len(args) == 0 {
			return xpuTable(w, p, s)
		}
	case "mthreads-gmi":
		if len(args) == 0 {
			return mthreadsTable(w, p, s)
		}
	case "brsmi", "birensmi":
		if hasPrefix(args, "--query-gpu=") {
			return nvidiaCSV(w, p, s, args)
		}
	case "ixsmi":
		if len(args) == 0 {
			return ixsmiTable(w, p, s)
		}
		if hasPrefix(args, "--query-gpu=") {
			return nvidiaCSV(w, p, s, args)
		}
	case "mx-smi":
		if len(args) == 0 {
			return mxsmiTable(w, p, s)
		}
	case "efsmi":
		if len(args) == 0 {
			return efsmiTable(w, p, s)
		}
	}
	return usageError(tool, args)
}

// PrimaryArgs are the arguments smi.Collect passes for a full snapshot;
// exported for tests that render exactly what the collector asks.
func PrimaryArgs(tool string) []string {
	switch tool {
	case "nvidia-smi":
		return []string{"-q", "-x"}
	case "rocm-smi", "hy-smi":
		return rocmsmireceiver.JSONArgs
	case "npu-smi":
		return []string{"info"}
	case "xpu-smi":
		return []string{"-m"}
	case "brsmi", "birensmi":
		return nvidiasmireceiver.QueryArgs()
	}
	return nil
}

func usageError(tool string, args []string) error {
	return fmt.Errorf("%s %s: %w", tool, strings.Join(args, " "), ErrUsage)
}

func driver(p *Profile, def string) string {
	if p.DriverVersion != "" {
		return p.DriverVersion
	}
	return def
}

func has(args []string, want string) bool {
	for _, a := range args {
		if a == want {
			return true
		}
	}
	return false
}

func hasPrefix(args []string, prefix string) bool {
	for _, a := range args {
		if strings.HasPrefix(a, prefix) {
			return true
		}
	}
	return false
}

// flagValue returns the argument after flag ("-i 0"), or "".
func flagValue(args []string, flag string) string {
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

func contains(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
