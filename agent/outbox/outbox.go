package outbox

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/heteroflow/heteroflow/agent/protocol"
)

// DefaultSegmentEntries is how many updates one segment file holds.
const DefaultSegmentEntries = 1024

// Outbox is safe for concurrent use.
type Outbox struct {
	dir        string
	segEntries int

	mu      sync.Mutex
	seg     *os.File
	segSeqs []uint64 // first sequence of each segment on disk, ascending
	segLen  int      // entries in the open (last) segment
	next    uint64   // sequence the next Append gets
	acked   uint64
	pending []protocol.StatusUpdate // Seq > acked, ascending
	notify  chan struct{}
}

// Open opens or creates the outbox in dir and reloads what was not yet
// acknowledged. A torn last line (crash mid-write) is cut off.
func Open(dir string, segEntries int) (*Outbox, error) {
	if segEntries <= 0 {
		segEntries = DefaultSegmentEntries
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("outbox dir: %w", err)
	}
	o := &Outbox{dir: dir, segEntries: segEntries, next: 1, notify: make(chan struct{}, 1)}
	if err := o.load(); err != nil {
		return nil, err
	}
	return o, nil
}

func (o *Outbox) load() error {
	b, err := os.ReadFile(filepath.Join(o.dir, "acked"))
	switch {
	case err == nil:
		if o.acked, err = strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err != nil {
			return fmt.Errorf("outbox acked file: %w", err)
		}
	case !errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("outbox acked file: %w", err)
	}
	o.next = o.acked + 1
	ents, err := os.ReadDir(o.dir)
	if err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	for _, e := range ents {
		if n, ok := strings.CutSuffix(e.Name(), ".jsonl"); ok {
			if s, err := strconv.ParseUint(n, 10, 64); err == nil {
				o.segSeqs = append(o.segSeqs, s)
			}
		}
	}
	sort.Slice(o.segSeqs, func(i, j int) bool { return o.segSeqs[i] < o.segSeqs[j] })
	for i, s := range o.segSeqs {
		n, err := o.readSegment(s, i == len(o.segSeqs)-1)
		if err != nil {
			return err
		}
		if i == len(o.segSeqs)-1 {
			o.segLen = n
		}
	}
	if len(o.segSeqs) > 0 && o.segLen < o.segEntries {
		f, err := os.OpenFile(o.segPath(o.segSeqs[len(o.segSeqs)-1]), os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return fmt.Errorf("outbox reopen segment: %w", err)
		}
		o.seg = f
	}
	return nil
}

// readSegment loads entries of one segment; in the last one a torn tail is
// truncated away.
func (o *Outbox) readSegment(first uint64, last bool) (int, error) {
	path := o.segPath(first)
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("outbox read segment: %w", err)
	}
	n, good := 0, 0
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		end := good + len(line) + 1
		if end > len(b) { // no trailing newline: the write was torn
			break
		}
		var u protocol.StatusUpdate
		if err := json.Unmarshal(line, &u); err != nil {
			if last {
				break
			}
			return 0, fmt.Errorf("outbox segment %s: corrupt entry: %w", path, err)
		}
		good, n = end, n+1
		if u.Seq >= o.next {
			o.next = u.Seq + 1
		}
		if u.Seq > o.acked {
			o.pending = append(o.pending, u)
		}
	}
	if last && good < len(b) {
		if err := os.Truncate(path, int64(good)); err != nil {
			return 0, fmt.Errorf("outbox cut torn entry: %w", err)
		}
	}
	return n, nil
}

func (o *Outbox) segPath(first uint64) string {
	return filepath.Join(o.dir, fmt.Sprintf("%020d.jsonl", first))
}

// Append stores u with the next sequence number and returns it once the
// entry is on disk.
func (o *Outbox) Append(u protocol.StatusUpdate) (uint64, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	u.Seq = o.next
	line, err := json.Marshal(u)
	if err != nil {
		return 0, fmt.Errorf("outbox encode: %w", err)
	}
	if o.seg == nil || o.segLen >= o.segEntries {
		if err := o.newSegment(u.Seq); err != nil {
			return 0, err
		}
	}
	if _, err := o.seg.Write(append(line, '\n')); err != nil {
		return 0, fmt.Errorf("outbox write: %w", err)
	}
	if err := o.seg.Sync(); err != nil {
		return 0, fmt.Errorf("outbox fsync: %w", err)
	}
	o.segLen++
	o.next++
	o.pending = append(o.pending, u)
	select {
	case o.notify <- struct{}{}:
	default:
	}
	return u.Seq, nil
}

func (o *Outbox) newSegment(first uint64) error {
	if o.seg != nil {
		if err := o.seg.Close(); err != nil {
			return fmt.Errorf("outbox close segment: %w", err)
		}
	}
	f, err := os.OpenFile(o.segPath(first), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("outbox new segment: %w", err)
	}
	if err := syncDir(o.dir); err != nil {
		f.Close()
		return err
	}
	o.seg, o.segLen = f, 0
	o.segSeqs = append(o.segSeqs, first)
	return nil
}

// Pending returns up to max unacknowledged updates, oldest first.
func (o *Outbox) Pending(max int) []protocol.StatusUpdate {
	o.mu.Lock()
	defer o.mu.Unlock()
	if max <= 0 || max > len(o.pending) {
		max = len(o.pending)
	}
	return append([]protocol.StatusUpdate(nil), o.pending[:max]...)
}

// Len is the number of unacknowledged updates.
func (o *Outbox) Len() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.pending)
}

// Acked is the highest acknowledged sequence.
func (o *Outbox) Acked() uint64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.acked
}

// Ack records that every update with Seq ≤ seq was applied by the server,
// and deletes segments that hold nothing newer.
func (o *Outbox) Ack(seq uint64) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if seq <= o.acked {
		return nil
	}
	if seq >= o.next {
		return fmt.Errorf("outbox: ack %d beyond last sequence %d", seq, o.next-1)
	}
	if err := writeFileAtomic(filepath.Join(o.dir, "acked"), []byte(strconv.FormatUint(seq, 10)+"\n")); err != nil {
		return err
	}
	o.acked = seq
	i := sort.Search(len(o.pending), func(i int) bool { return o.pending[i].Seq > seq })
	o.pending = append([]protocol.StatusUpdate(nil), o.pending[i:]...)
	// Segment k holds sequences [segSeqs[k], segSeqs[k+1]); the open one is kept.
	for len(o.segSeqs) > 1 && o.segSeqs[1]-1 <= seq {
		if err := os.Remove(o.segPath(o.segSeqs[0])); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("outbox drop segment: %w", err)
		}
		o.segSeqs = o.segSeqs[1:]
	}
	return nil
}

// Close closes the open segment.
func (o *Outbox) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.seg == nil {
		return nil
	}
	err := o.seg.Close()
	o.seg = nil
	return err
}
