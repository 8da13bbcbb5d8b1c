package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/heteroflow/heteroflow/agent/protocol"
)

// Record is one running task.
type Record struct {
	TaskID    int64     `json:"task_id"`
	Attempt   int       `json:"attempt"`
	PID       int       `json:"pid"`
	PGID      int       `json:"pgid"`
	ProcStart uint64    `json:"proc_start,omitempty"` // /proc start time in ticks (Linux)
	StartedAt time.Time `json:"started_at"`
	LogDir    string    `json:"log_dir,omitempty"`
	Container string    `json:"container,omitempty"`
	// AssignmentID is the server's run item that started the task.
	AssignmentID int64 `json:"assignment_id,omitempty"`
	// Partitions are the hardware partitions the agent created for the task,
	// so they can be removed when the task is killed as an orphan.
	Partitions []protocol.DeviceSlice `json:"partitions,omitempty"`
	// ShimPID/ShimStart identify the task shim (agent/runner) that owns the
	// task's output and records its exit; a restarted agent adopts the task
	// while the shim runs.
	ShimPID   int    `json:"shim_pid,omitempty"`
	ShimStart uint64 `json:"shim_start,omitempty"`
	WorkDir   string `json:"work_dir,omitempty"`
	// TimeoutSeconds and Devices are what an adopting agent needs from the
	// spec (the rest of it, secret_env included, is never written here).
	TimeoutSeconds int                    `json:"timeout_seconds,omitempty"`
	Devices        []protocol.DeviceSlice `json:"devices,omitempty"`
}

// Key identifies a record.
func (r Record) Key() string { return fmt.Sprintf("%d/%d", r.TaskID, r.Attempt) }

// Store keeps records in one JSON file, together with the ids of the
// assignments already acted on (so a restarted agent never starts the same
// assignment twice, even before the server heard about the first start).
type Store struct {
	path    string
	mu      sync.Mutex
	recs    map[string]Record
	handled []int64
}

// maxHandled bounds the remembered assignment ids; the server closes an
// assignment once the agent reports on it, so only recent ones matter.
const maxHandled = 4096

type file struct {
	Tasks   []Record `json:"tasks"`
	Handled []int64  `json:"handled"`
}

// Open loads path (a missing file is an empty record).
func Open(path string) (*Store, error) {
	s := &Store{path: path, recs: map[string]Record{}}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return s, nil
	case err != nil:
		return nil, fmt.Errorf("state: %w", err)
	}
	var f file
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("state %s: %w", path, err)
	}
	for _, r := range f.Tasks {
		s.recs[r.Key()] = r
	}
	s.handled = f.Handled
	return s, nil
}

// Put adds or replaces r and persists.
func (s *Store) Put(r Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recs[r.Key()] = r
	return s.save()
}

// Remove drops the record of taskID/attempt and persists.
func (s *Store) Remove(taskID int64, attempt int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.recs, Record{TaskID: taskID, Attempt: attempt}.Key())
	return s.save()
}

// List returns the records ordered by task id and attempt.
func (s *Store) List() []Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Record, 0, len(s.recs))
	for _, r := range s.recs {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].TaskID != out[j].TaskID {
			return out[i].TaskID < out[j].TaskID
		}
		return out[i].Attempt < out[j].Attempt
	})
	return out
}

// MarkHandled remembers an assignment id and persists.
func (s *Store) MarkHandled(id int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handled = append(s.handled, id)
	if len(s.handled) > maxHandled {
		s.handled = append([]int64(nil), s.handled[len(s.handled)-maxHandled:]...)
	}
	return s.save()
}

// Handled returns the remembered assignment ids.
func (s *Store) Handled() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int64(nil), s.handled...)
}

func (s *Store) save() error {
	recs := make([]Record, 0, len(s.recs))
	for _, r := range s.recs {
		recs = append(recs, r)
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].Key() < recs[j].Key() })
	b, err := json.MarshalIndent(file{Tasks: recs, Handled: s.handled}, "", "  ")
	if err != nil {
		return fmt.Errorf("state encode: %w", err)
	}
	return writeAtomic(s.path, b, 0o600)
}

// writeAtomic writes via a temp file, fsync and rename.
func writeAtomic(path string, data []byte, perm os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: fsync: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
