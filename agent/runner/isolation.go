package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/heteroflow/heteroflow/agent/protocol"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// Isolator creates Gold partitions through the vendor CLI before a task
// starts and removes them when it ends. It keeps the vNPU ids it handed out
// so two tasks on one chip never ask npu-smi for the same id.
type Isolator struct {
	CLI    Commander
	Logger *slog.Logger
	// Silver is what the node enforces for QoS Silver on NVIDIA (DetectSilver).
	Silver Silver

	mu         sync.Mutex
	vnpuUsed   map[int]bool
	mpsClients map[string]int // running Silver clients per GPU MPS daemon
}

// Prepared is the outcome of Prepare: the devices as the task sees them
// (partition UUIDs/ids filled in), the limit variables, and the undo steps.
type Prepared struct {
	Devices  []protocol.DeviceSlice
	Env      map[string]string
	Warnings []string
	// Mounts are host paths a container needs for the isolation
	// ("host:container[:ro]"): the MPS pipe directory, libvgpu.so.
	Mounts []string
	// IPCHost: the container shares the host's IPC namespace (CUDA MPS).
	IPCHost bool
	// DeviceNodes are /dev entries a container needs for the isolation
	// (Cambricon's /dev/cambricon-split).
	DeviceNodes []string
	undo        []func(context.Context) error
}

// Release removes every partition Prepare created, newest first, and
// returns all failures joined (a failed destroy must not hide the others).
func (p *Prepared) Release(ctx context.Context) error {
	if p == nil {
		return nil
	}
	var errs []error
	for i := len(p.undo) - 1; i >= 0; i-- {
		if err := p.undo[i](ctx); err != nil {
			errs = append(errs, err)
		}
	}
	p.undo = nil
	return errors.Join(errs...)
}

// Prepare applies the isolation of qos to devices. On error nothing stays
// behind: partitions created so far are released.
func (iso *Isolator) Prepare(ctx context.Context, qos string, devices []protocol.DeviceSlice) (*Prepared, error) {
	p := &Prepared{Devices: append([]protocol.DeviceSlice(nil), devices...), Env: map[string]string{}}
	switch qos {
	case "", "bronze":
		return p, nil
	case "silver":
		var nvidia, others []protocol.DeviceSlice
		for _, d := range p.Devices {
			if d.Isolation == protocol.IsolationBestEffort {
				// Allowed by the task where nothing enforces Silver:
				// visibility only, as Bronze.
				iso.log().Info("silver best-effort: no limits enforced on this node", "vendor", d.Vendor, "index", d.Index)
				continue
			}
			if d.Vendor == inventory.VendorNVIDIA {
				nvidia = append(nvidia, d)
			} else {
				others = append(others, d)
			}
		}
		if len(others) > 0 {
			env, err := SilverEnv(others)
			if err != nil {
				return nil, err
			}
			p.Env = env
			if err := iso.silverCambricon(p, others); err != nil {
				return nil, err
			}
		}
		if len(nvidia) > 0 {
			if err := iso.silverNVIDIA(ctx, p, nvidia); err != nil {
				if rerr := p.Release(context.WithoutCancel(ctx)); rerr != nil {
					err = errors.Join(err, fmt.Errorf("undo: %w", rerr))
				}
				return nil, err
			}
		}
		return p, nil
	case "gold":
	default:
		return nil, fmt.Errorf("unknown qos %q", qos)
	}
	for i := range p.Devices {
		if err := iso.gold(ctx, p, &p.Devices[i]); err != nil {
			if rerr := p.Release(context.WithoutCancel(ctx)); rerr != nil {
				err = errors.Join(err, fmt.Errorf("undo: %w", rerr))
			}
			return nil, err
		}
	}
	return p, nil
}

// gold creates the hardware partition d asks for, when it asks for one that
// does not exist yet (Profile set, no PartitionUUID/PartitionID).
func (iso *Isolator) gold(ctx context.Context, p *Prepared, d *protocol.DeviceSlice) error {
	if d.Profile == "" && d.Isolation != protocol.IsolationVDCU {
		return nil // whole device or an existing partition: visibility is enough
	}
	if d.PartitionUUID != "" || d.PartitionID != "" {
		return nil
	}
	switch {
	case d.Vendor == inventory.VendorNVIDIA:
		return iso.createMIG(ctx, p, d)
	case d.Vendor == inventory.VendorAscend:
		return iso.createVNPU(ctx, p, d)
	case d.Vendor == inventory.VendorHygon:
		return iso.createVDCU(ctx, p, d)
	}
	return fmt.Errorf("vendor %s: no CLI-created hardware partition; assign a whole device or an existing partition", d.Vendor)
}

func (iso *Isolator) log() *slog.Logger {
	if iso.Logger != nil {
		return iso.Logger
	}
	return slog.Default()
}
