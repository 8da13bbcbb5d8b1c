package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/heteroflow/heteroflow/agent/protocol"
	"github.com/heteroflow/heteroflow/receivers/inventory"
	"github.com/heteroflow/heteroflow/receivers/vendorcatalog"
)

// Silver is what this node can enforce for QoS Silver on NVIDIA GPUs:
// CUDA MPS when nvidia-cuda-mps-control is installed (one control daemon
// per GPU, per-client thread percentage and pinned memory limit), else
// HAMi-core when its libvgpu.so is (preloaded into the task, which then
// reads CUDA_DEVICE_MEMORY_LIMIT / CUDA_DEVICE_SM_LIMIT). A node with
// neither offers no Silver on NVIDIA: nothing would hold the limits.
type Silver struct {
	MPSControl string // path of nvidia-cuda-mps-control; "" when absent
	HAMiLib    string // path of libvgpu.so; "" when absent
	// MPSDir holds one pipe and log directory per GPU (MPSDir/<uuid>/…).
	MPSDir string
	// CambriconSplit is Cambricon's split driver node (/dev/cambricon-split)
	// when present: only then does CAMBRICON_SPLIT_* limit memory.
	CambriconSplit string
	// CambriconMounts are the split's host programs present on the node
	// (smlu-containerd), mounted read-only into containers.
	CambriconMounts []string
}

// DetectSilver looks for the catalog's Silver programs on PATH (lookPath)
// and its limiter libraries on disk (exists).
func DetectSilver(lookPath func(string) (string, error), exists func(string) bool, mpsDir string) Silver {
	s := Silver{MPSDir: mpsDir}
	e, _ := vendorcatalog.Lookup(vendorcatalog.NVIDIA)
	if p, err := lookPath(e.SilverTools[vendorcatalog.DriverMPS]); err == nil {
		s.MPSControl = p
	}
	for _, l := range e.SilverLibs[vendorcatalog.DriverHAMiCore] {
		if exists(l) {
			s.HAMiLib = l
			break
		}
	}
	c, _ := vendorcatalog.Lookup(vendorcatalog.Cambricon)
	if n := c.SilverNodes[vendorcatalog.DriverEnvLimits]; exists(n) {
		s.CambriconSplit = n
		for _, m := range c.SilverMounts[vendorcatalog.DriverEnvLimits] {
			if exists(m) {
				s.CambriconMounts = append(s.CambriconMounts, m)
			}
		}
	}
	return s
}

// FileExists is DetectSilver's exists on the real file system: a regular
// file (a library, a program) or a device node.
func FileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && (st.Mode().IsRegular() || st.Mode()&os.ModeDevice != 0)
}

// Mechanism is the Silver mechanism this node enforces on vendor's devices,
// or "" when it enforces none. Cambricon: the memory split, only where its
// driver node exists. AMD keeps the catalog's HIP_DEVICE_MEMORY_LIMIT;
// other vendors: none.
func (s Silver) Mechanism(vendor string) string {
	switch vendor {
	case vendorcatalog.NVIDIA:
		switch {
		case s.MPSControl != "":
			return vendorcatalog.DriverMPS
		case s.HAMiLib != "":
			return vendorcatalog.DriverHAMiCore
		}
		return ""
	case vendorcatalog.Cambricon:
		if s.CambriconSplit != "" {
			return vendorcatalog.DriverEnvLimits
		}
		return ""
	case vendorcatalog.AMD:
		return vendorcatalog.IsolationFor(vendor, "").DriverLimits
	}
	return ""
}

// Enforce sets every device's Silver capability in inv to what this node
// enforces, so the scheduler places Silver only where it holds. A GPU in MIG
// mode has none: it runs work only inside its MIG instances; nor has a model
// the mechanism does not cover (Cambricon's split: MLU370 only).
func (s Silver) Enforce(inv []inventory.Snapshot) {
	for i := range inv {
		m := s.Mechanism(inv[i].Vendor)
		for j := range inv[i].Devices {
			d := &inv[i].Devices[j]
			d.Isolation.DriverLimits = m
			if d.MIGMode || !vendorcatalog.SilverOnModel(inv[i].Vendor, m, d.Model) {
				d.Isolation.DriverLimits = ""
			}
		}
	}
}

// silverNVIDIA applies the mechanism the scheduler chose (the slice's
// isolation; the node's own when the slice names none) and refuses one the
// node cannot enforce rather than run the task unlimited.
func (iso *Isolator) silverNVIDIA(ctx context.Context, p *Prepared, ds []protocol.DeviceSlice) error {
	mech := ds[0].Isolation
	if mech == "" {
		mech = iso.Silver.Mechanism(vendorcatalog.NVIDIA)
	}
	switch mech {
	case vendorcatalog.DriverMPS:
		if iso.Silver.MPSControl == "" {
			return fmt.Errorf("silver via CUDA MPS: nvidia-cuda-mps-control is not installed on this node")
		}
		if len(ds) != 1 {
			return fmt.Errorf("silver via CUDA MPS: one GPU per task (one MPS daemon per GPU), not %d", len(ds))
		}
		dir, err := iso.mpsUp(ctx, ds[0])
		if err != nil {
			return err
		}
		p.undo = append(p.undo, func(ctx context.Context) error { return iso.mpsDown(ctx, ds[0]) })
		p.Env["CUDA_MPS_PIPE_DIRECTORY"] = filepath.Join(dir, "pipe")
		p.Env["CUDA_MPS_LOG_DIRECTORY"] = filepath.Join(dir, "log")
		p.Mounts = append(p.Mounts, dir+":"+dir)
		p.IPCHost = true // MPS clients share memory with the server
		nvidiaMPS(p.Env, ds)
	case vendorcatalog.DriverHAMiCore:
		if iso.Silver.HAMiLib == "" {
			return fmt.Errorf("silver via HAMi-core: libvgpu.so is not installed on this node")
		}
		p.Env["LD_PRELOAD"] = iso.Silver.HAMiLib
		p.Mounts = append(p.Mounts, iso.Silver.HAMiLib+":"+iso.Silver.HAMiLib+":ro")
		nvidiaHAMi(p.Env, ds)
	default:
		return fmt.Errorf("silver on NVIDIA: this node enforces neither CUDA MPS nor HAMi-core (slice asks %q)", mech)
	}
	return nil
}

// silverCambricon refuses the memory split where the node's driver does not
// enforce it, and hands a container the split's node and programs.
func (iso *Isolator) silverCambricon(p *Prepared, ds []protocol.DeviceSlice) error {
	for _, d := range ds {
		if d.Vendor != vendorcatalog.Cambricon {
			continue
		}
		if iso.Silver.CambriconSplit == "" {
			return fmt.Errorf("silver via Cambricon memory split: /dev/cambricon-split is not present on this node")
		}
		p.DeviceNodes = append(p.DeviceNodes, iso.Silver.CambriconSplit)
		for _, m := range iso.Silver.CambriconMounts {
			p.Mounts = append(p.Mounts, m+":"+m+":ro")
		}
		return nil
	}
	return nil
}

// mpsKey names a GPU's MPS daemon: its UUID (MPS renumbers indices).
func mpsKey(d protocol.DeviceSlice) string {
	if d.UUID != "" {
		return d.UUID
	}
	return "gpu" + fmt.Sprint(d.Index)
}

func mpsEnv(dir, key string) []string {
	return []string{"CUDA_VISIBLE_DEVICES=" + strings.TrimPrefix(key, "gpu"),
		"CUDA_MPS_PIPE_DIRECTORY=" + filepath.Join(dir, "pipe"), "CUDA_MPS_LOG_DIRECTORY=" + filepath.Join(dir, "log")}
}

// mpsUp starts the GPU's control daemon for its first Silver client
// (`nvidia-cuda-mps-control -d` with the GPU alone visible and its own pipe
// and log directories) and counts the clients; it returns the directory.
func (iso *Isolator) mpsUp(ctx context.Context, d protocol.DeviceSlice) (string, error) {
	key := mpsKey(d)
	dir := filepath.Join(iso.Silver.MPSDir, key)
	iso.mu.Lock()
	defer iso.mu.Unlock()
	if iso.mpsClients == nil {
		iso.mpsClients = map[string]int{}
	}
	if iso.mpsClients[key] > 0 {
		iso.mpsClients[key]++
		return dir, nil
	}
	for _, sub := range []string{"pipe", "log"} {
		// Clients run as the task's account: they must reach the pipes.
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return "", fmt.Errorf("MPS directory: %w", err)
		}
	}
	run, err := iso.envCLI()
	if err != nil {
		return "", err
	}
	if _, err := run.RunEnv(ctx, mpsEnv(dir, key), "", iso.Silver.MPSControl, "-d"); err != nil {
		return "", fmt.Errorf("start MPS control daemon for GPU %s: %w", key, err)
	}
	iso.mpsClients[key] = 1
	iso.log().Info("started MPS control daemon", "gpu", key, "dir", dir)
	return dir, nil
}

// mpsDown stops the GPU's control daemon when its last client ended
// (`echo quit | nvidia-cuda-mps-control` on its pipe directory).
func (iso *Isolator) mpsDown(ctx context.Context, d protocol.DeviceSlice) error {
	key := mpsKey(d)
	iso.mu.Lock()
	defer iso.mu.Unlock()
	iso.mpsClients[key]--
	if iso.mpsClients[key] > 0 {
		return nil
	}
	delete(iso.mpsClients, key)
	run, err := iso.envCLI()
	if err != nil {
		return err
	}
	dir := filepath.Join(iso.Silver.MPSDir, key)
	if _, err := run.RunEnv(ctx, mpsEnv(dir, key), "quit\n", iso.Silver.MPSControl); err != nil {
		return fmt.Errorf("stop MPS control daemon for GPU %s: %w", key, err)
	}
	iso.log().Info("stopped MPS control daemon", "gpu", key)
	return nil
}

func (iso *Isolator) envCLI() (EnvCommander, error) {
	if c, ok := iso.CLI.(EnvCommander); ok {
		return c, nil
	}
	return nil, fmt.Errorf("the agent's command runner cannot pass environment and input (CUDA MPS needs both)")
}
