package ingest

import (
	"sort"
	"sync"

	"github.com/prometheus/prometheus/model/metadata"
)

// maxFamilies bounds the metadata kept in memory; a push with a runaway
// number of metric names must not grow the server without limit.
const maxFamilies = 100_000

// MetadataStore keeps the last metadata seen per metric family name.
// It is safe for concurrent use.
type MetadataStore struct {
	mu       sync.RWMutex
	families map[string]metadata.Metadata
}

// NewMetadataStore returns an empty store.
func NewMetadataStore() *MetadataStore {
	return &MetadataStore{families: map[string]metadata.Metadata{}}
}

// Set records md for family, ignoring empty metadata.
func (s *MetadataStore) Set(family string, md metadata.Metadata) {
	if family == "" || md.IsEmpty() {
		return
	}
	s.mu.RLock()
	old, ok := s.families[family]
	s.mu.RUnlock()
	if ok && old == md {
		return // the common case: unchanged, no write lock
	}
	s.mu.Lock()
	if _, exists := s.families[family]; exists || len(s.families) < maxFamilies {
		s.families[family] = md
	}
	s.mu.Unlock()
}

// List returns metadata by family, restricted to metric when non-empty and
// to at most limit families when limit > 0, in name order.
func (s *MetadataStore) List(metric string, limit int) map[string][]metadata.Metadata {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := map[string][]metadata.Metadata{}
	if metric != "" {
		if md, ok := s.families[metric]; ok {
			out[metric] = []metadata.Metadata{md}
		}
		return out
	}
	names := make([]string, 0, len(s.families))
	for n := range s.families {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if limit > 0 && len(out) >= limit {
			break
		}
		out[n] = []metadata.Metadata{s.families[n]}
	}
	return out
}
