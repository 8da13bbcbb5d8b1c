package runner

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// LogFile is a size-capped, rotating capture of one output stream. Each
// segment file is named <stream>.<offset>.log, where offset is the byte
// position of its first byte in the whole stream: readers (the log shipper,
// `heteroflow task logs`) can then resume by offset without an index file,
// and the agent can reopen a stream after a restart.
type LogFile struct {
	dir, stream string
	segBytes    int64 // rotate when a segment reaches this size
	keep        int   // segments kept, the one being written included

	mu       sync.Mutex
	f        *os.File
	segStart int64
	segSize  int64
}

// OpenLog opens (or resumes) the stream in dir. segBytes > 0, keep ≥ 1; at
// most segBytes*keep bytes stay on disk.
func OpenLog(dir, stream string, segBytes int64, keep int) (*LogFile, error) {
	if segBytes <= 0 || keep < 1 {
		return nil, fmt.Errorf("log %s: segment size and kept count must be positive", stream)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("log dir: %w", err)
	}
	l := &LogFile{dir: dir, stream: stream, segBytes: segBytes, keep: keep}
	segs, err := segments(dir, stream)
	if err != nil {
		return nil, err
	}
	start := int64(0)
	if n := len(segs); n > 0 {
		start = segs[n-1]
	}
	if err := l.open(start); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *LogFile) open(start int64) error {
	f, err := os.OpenFile(l.segPath(start), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("open log segment: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("stat log segment: %w", err)
	}
	l.f, l.segStart, l.segSize = f, start, st.Size()
	return nil
}

func (l *LogFile) segPath(start int64) string {
	return filepath.Join(l.dir, fmt.Sprintf("%s.%020d.log", l.stream, start))
}

// Write appends p, rotating as segments fill up.
func (l *LogFile) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return 0, os.ErrClosed
	}
	written := 0
	for len(p) > 0 {
		if l.segSize >= l.segBytes {
			if err := l.rotate(); err != nil {
				return written, err
			}
		}
		room := l.segBytes - l.segSize
		chunk := p
		if int64(len(chunk)) > room {
			chunk = p[:room]
		}
		n, err := l.f.Write(chunk)
		written += n
		l.segSize += int64(n)
		if err != nil {
			return written, fmt.Errorf("write log: %w", err)
		}
		p = p[n:]
	}
	return written, nil
}

func (l *LogFile) rotate() error {
	if err := l.f.Close(); err != nil {
		return fmt.Errorf("close log segment: %w", err)
	}
	if err := l.open(l.segStart + l.segSize); err != nil {
		return err
	}
	segs, err := segments(l.dir, l.stream)
	if err != nil {
		return err
	}
	for len(segs) > l.keep {
		if err := os.Remove(l.segPath(segs[0])); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("drop old log segment: %w", err)
		}
		segs = segs[1:]
	}
	return nil
}

// Size is the number of bytes ever written to the stream (the next offset).
func (l *LogFile) Size() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.segStart + l.segSize
}

// Close closes the current segment.
func (l *LogFile) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// ReadLog returns up to max bytes of the stream starting at offset. When the
// bytes at offset were rotated away, it starts at the oldest byte still kept
// and start says where; next is the offset to ask for next time.
func ReadLog(dir, stream string, offset int64, max int) (data []byte, start, next int64, err error) {
	segs, err := segments(dir, stream)
	if err != nil || len(segs) == 0 {
		return nil, offset, offset, err
	}
	if offset < segs[0] {
		offset = segs[0]
	}
	start = offset
	for i, s := range segs {
		if i+1 < len(segs) && segs[i+1] <= offset {
			continue
		}
		f, err := os.Open(filepath.Join(dir, fmt.Sprintf("%s.%020d.log", stream, s)))
		if err != nil {
			return data, start, offset, fmt.Errorf("open log segment: %w", err)
		}
		buf := make([]byte, max-len(data))
		n, rerr := f.ReadAt(buf, offset-s)
		f.Close()
		data = append(data, buf[:n]...)
		offset += int64(n)
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			return data, start, offset, fmt.Errorf("read log segment: %w", rerr)
		}
		if len(data) >= max {
			break
		}
	}
	return data, start, offset, nil
}

// StreamSize is the bytes written so far to a stream in dir (the end offset
// of its newest segment).
func StreamSize(dir, stream string) int64 {
	segs, err := segments(dir, stream)
	if err != nil || len(segs) == 0 {
		return 0
	}
	last := segs[len(segs)-1]
	st, err := os.Stat(filepath.Join(dir, fmt.Sprintf("%s.%020d.log", stream, last)))
	if err != nil {
		return last
	}
	return last + st.Size()
}

// segments lists the starting offsets of a stream's segments, ascending.
func segments(dir, stream string) ([]int64, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("list log segments: %w", err)
	}
	var out []int64
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), stream+".")
		if !ok {
			continue
		}
		num, ok := strings.CutSuffix(rest, ".log")
		if !ok {
			continue
		}
		if n, err := strconv.ParseInt(num, 10, 64); err == nil {
			out = append(out, n)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}
