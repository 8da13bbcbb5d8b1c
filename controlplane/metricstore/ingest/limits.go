package ingest

import (
	"errors"
	"time"
)

// Limits bound what pushes may cost. Zero values are replaced by Defaults.
type Limits struct {
	// MaxBodyBytes is the largest accepted request body as sent (compressed).
	MaxBodyBytes int64 `yaml:"max_body_bytes" json:"max_body_bytes"`
	// MaxInflightRequests caps concurrent pushes being decoded and appended.
	MaxInflightRequests int `yaml:"max_inflight_requests" json:"max_inflight_requests"`
	// MaxInflightBytes caps the sum of bodies held in memory at once.
	MaxInflightBytes int64 `yaml:"max_inflight_bytes" json:"max_inflight_bytes"`
	// RetryAfter is what 429 and 503 answers tell the sender to wait.
	RetryAfter time.Duration `yaml:"retry_after" json:"retry_after"`
}

// DefaultLimits returns limits sized for one server: 16 MiB bodies (a
// collector batch of ~100k samples is ~2 MiB snappy), 64 concurrent pushes
// and 256 MiB of bodies in flight.
func DefaultLimits() Limits {
	return Limits{
		MaxBodyBytes:        16 << 20,
		MaxInflightRequests: 64,
		MaxInflightBytes:    256 << 20,
		RetryAfter:          5 * time.Second,
	}
}

// WithDefaults fills zero fields from DefaultLimits.
func (l Limits) WithDefaults() Limits {
	d := DefaultLimits()
	if l.MaxBodyBytes == 0 {
		l.MaxBodyBytes = d.MaxBodyBytes
	}
	if l.MaxInflightRequests == 0 {
		l.MaxInflightRequests = d.MaxInflightRequests
	}
	if l.MaxInflightBytes == 0 {
		l.MaxInflightBytes = d.MaxInflightBytes
	}
	if l.RetryAfter == 0 {
		l.RetryAfter = d.RetryAfter
	}
	return l
}

// Validate reports the first inconsistent field.
func (l Limits) Validate() error {
	switch {
	case l.MaxBodyBytes <= 0:
		return errors.New("ingest: max_body_bytes must be positive")
	case l.MaxInflightRequests <= 0:
		return errors.New("ingest: max_inflight_requests must be positive")
	case l.MaxInflightBytes < l.MaxBodyBytes:
		return errors.New("ingest: max_inflight_bytes must be at least max_body_bytes, or no maximal body could ever be accepted")
	case l.RetryAfter < time.Second:
		return errors.New("ingest: retry_after must be at least 1s (Retry-After has second resolution)")
	}
	return nil
}
