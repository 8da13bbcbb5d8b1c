package fakesmi

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Profile describes the simulated node; it does not change at run time.
type Profile struct {
	Vendor        string `json:"vendor"`
	Model         string `json:"model"`
	Count         int    `json:"count"`
	MemoryMiB     int64  `json:"memory_mib"`
	DriverVersion string `json:"driver_version,omitempty"`
	// FirstIndex is the id the CLI prints for the first device: a host or
	// container that sees only some devices numbers them from there (npu-smi
	// NPU IDs, cnmon cards, …). NVIDIA always numbers from 0 (nvidia-smi
	// enumerates what it sees). State and -i arguments use the printed ids.
	FirstIndex int `json:"first_index,omitempty"`
	// Partitions present at start (MIG instances, vNPUs, VFs).
	Partitions []PartitionSpec `json:"partitions,omitempty"`
}

// PartitionSpec is one partition on device Device.
type PartitionSpec struct {
	Device    int    `json:"device"`
	Profile   string `json:"profile"`
	ID        int    `json:"id"`
	MemoryMiB int64  `json:"memory_mib,omitempty"`
}

// DeviceState is the live, agent-updated part of one device.
type DeviceState struct {
	UtilizationPercent float64 `json:"utilization_percent"`
	MemoryUsedMiB      int64   `json:"memory_used_mib"`
	TemperatureCelsius float64 `json:"temperature_celsius,omitempty"`
	PowerWatts         float64 `json:"power_watts,omitempty"`
	// PartitionMemoryUsedMiB is the memory in use inside each partition of
	// the device, by partition id (a MIG GPU instance id).
	PartitionMemoryUsedMiB map[string]int64 `json:"partition_memory_used_mib,omitempty"`
}

// State is the state file: per-device figures by index and the partitions
// created or destroyed through the simulated isolation commands.
type State struct {
	Devices    map[int]DeviceState `json:"devices"`
	Partitions []PartitionSpec     `json:"partitions"`
	// Processes are the compute processes on the devices (by printed id), as
	// nvidia-smi --query-compute-apps lists them.
	Processes []Process `json:"processes,omitempty"`
	// MPS are the running simulated MPS control daemons.
	MPS []MPSDaemon `json:"mps,omitempty"`
	// Initialised is set once the profile's partitions were copied in.
	Initialised bool `json:"initialised"`
}

// Process is one compute process's memory on one device.
type Process struct {
	PID       int   `json:"pid"`
	Device    int   `json:"device"`
	MemoryMiB int64 `json:"memory_mib"`
}

// LoadProfile reads and validates a profile file.
func LoadProfile(path string) (*Profile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("fakesmi profile: %w", err)
	}
	var p Profile
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("fakesmi profile %s: %w", path, err)
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("fakesmi profile %s: %w", path, err)
	}
	return &p, nil
}

// id is the id the CLI prints for the device at position i.
func (p *Profile) id(i int) int { return p.FirstIndex + i }

// pos is the position of the device the CLI calls id, or -1.
func (p *Profile) pos(id int) int {
	if id < p.FirstIndex || id >= p.FirstIndex+p.Count {
		return -1
	}
	return id - p.FirstIndex
}

// Validate checks the fields every renderer needs.
func (p *Profile) Validate() error {
	switch {
	case p.Vendor == "":
		return errors.New("vendor is required")
	case p.Model == "":
		return errors.New("model is required")
	case p.Count < 1 || p.Count > 64:
		return fmt.Errorf("count %d out of 1..64", p.Count)
	case p.MemoryMiB <= 0:
		return errors.New("memory_mib must be positive")
	case p.FirstIndex < 0 || p.FirstIndex > 255:
		return fmt.Errorf("first_index %d out of 0..255", p.FirstIndex)
	case p.FirstIndex != 0 && p.Vendor == "nvidia":
		return errors.New("first_index: nvidia-smi numbers the GPUs it sees from 0")
	}
	return nil
}

// LoadState reads the state file; a missing file is an empty state.
func LoadState(path string) (*State, error) {
	s := &State{Devices: map[int]DeviceState{}}
	if path == "" {
		return s, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("fakesmi state: %w", err)
	}
	if err := json.Unmarshal(b, s); err != nil {
		return nil, fmt.Errorf("fakesmi state %s: %w", path, err)
	}
	if s.Devices == nil {
		s.Devices = map[int]DeviceState{}
	}
	return s, nil
}

// UpdateState applies fn to the state file under an exclusive lock and
// replaces the file atomically (write to a temporary file, rename), so a
// concurrently running fake CLI never reads a half-written state.
func UpdateState(path string, fn func(*State) error) error {
	lock, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return fmt.Errorf("fakesmi state lock: %w", err)
	}
	defer lock.Close()
	if err := lockFile(lock); err != nil {
		return fmt.Errorf("fakesmi state lock: %w", err)
	}
	defer unlockFile(lock) //nolint:errcheck // closing releases it too
	s, err := LoadState(path)
	if err != nil {
		return err
	}
	if err := fn(s); err != nil {
		return err
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".fakesmi-state-*")
	if err != nil {
		return fmt.Errorf("fakesmi state: %w", err)
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("fakesmi state: %w", err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("fakesmi state: %w", err)
	}
	return os.Rename(tmp.Name(), path)
}

// SetDevice is the agent-facing helper: set one device's live figures.
func SetDevice(path string, index int, d DeviceState) error {
	return UpdateState(path, func(s *State) error {
		s.Devices[index] = d
		return nil
	})
}

// partitions returns the live partitions: the profile's until the state
// has been initialised by an isolation command.
func (s *State) partitions(p *Profile) []PartitionSpec {
	if s.Initialised {
		return s.Partitions
	}
	return p.Partitions
}

// dev returns device i's live figures with defaults for unset fields.
func (s *State) dev(i int) DeviceState {
	d := s.Devices[i]
	if d.TemperatureCelsius == 0 {
		d.TemperatureCelsius = 35 + d.UtilizationPercent/4
	}
	if d.PowerWatts == 0 {
		d.PowerWatts = 50 + 2*d.UtilizationPercent
	}
	return d
}

// SetLoads sets every device's utilisation and memory in use (whole and
// per partition) to loads (by device index; a device not named carries
// none), keeping its other figures. A simulated agent calls it whenever its running tasks change.
func SetLoads(path string, loads map[int]DeviceState) error {
	return UpdateState(path, func(s *State) error {
		for i, d := range s.Devices {
			l := loads[i]
			d.UtilizationPercent, d.MemoryUsedMiB, d.PartitionMemoryUsedMiB = l.UtilizationPercent, l.MemoryUsedMiB, l.PartitionMemoryUsedMiB
			s.Devices[i] = d
		}
		for i, l := range loads {
			if _, ok := s.Devices[i]; !ok {
				s.Devices[i] = DeviceState{UtilizationPercent: l.UtilizationPercent, MemoryUsedMiB: l.MemoryUsedMiB,
					PartitionMemoryUsedMiB: l.PartitionMemoryUsedMiB}
			}
		}
		return nil
	})
}
