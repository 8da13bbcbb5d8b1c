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
	// MaxLabelsPerSeries, MaxLabelNameLength and MaxLabelValueLength bound
	// one series (400 beyond them).
	MaxLabelsPerSeries  int `yaml:"max_labels_per_series" json:"max_labels_per_series"`
	MaxLabelNameLength  int `yaml:"max_label_name_length" json:"max_label_name_length"`
	MaxLabelValueLength int `yaml:"max_label_value_length" json:"max_label_value_length"`
	// MaxSeriesPerRequest bounds the distinct series of one push (400).
	MaxSeriesPerRequest int `yaml:"max_series_per_request" json:"max_series_per_request"`
	// MaxNewSeriesPerMinute bounds the series a sender (API key or user)
	// may create per minute (429); a series pushed within the last hour is
	// not new.
	MaxNewSeriesPerMinute int `yaml:"max_new_series_per_minute" json:"max_new_series_per_minute"`
	// UTF8Names accepts UTF-8 metric and label names (Prometheus 3's
	// scheme); by default names follow the legacy [a-zA-Z_:][a-zA-Z0-9_:]*.
	UTF8Names bool `yaml:"utf8_names" json:"utf8_names"`
}

// DefaultLimits returns limits sized for one server: 16 MiB bodies (a
// collector batch of ~100k samples is ~2 MiB snappy), 64 concurrent pushes
// and 256 MiB of bodies in flight; series of at most 64 labels, names of
// 256 bytes and values of 2 KiB; 100k series per push and 100k new series
// per minute per sender (a node's agent makes a few hundred).
func DefaultLimits() Limits {
	return Limits{
		MaxBodyBytes:          16 << 20,
		MaxInflightRequests:   64,
		MaxInflightBytes:      256 << 20,
		RetryAfter:            5 * time.Second,
		MaxLabelsPerSeries:    64,
		MaxLabelNameLength:    256,
		MaxLabelValueLength:   2048,
		MaxSeriesPerRequest:   100_000,
		MaxNewSeriesPerMinute: 100_000,
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
	if l.MaxLabelsPerSeries == 0 {
		l.MaxLabelsPerSeries = d.MaxLabelsPerSeries
	}
	if l.MaxLabelNameLength == 0 {
		l.MaxLabelNameLength = d.MaxLabelNameLength
	}
	if l.MaxLabelValueLength == 0 {
		l.MaxLabelValueLength = d.MaxLabelValueLength
	}
	if l.MaxSeriesPerRequest == 0 {
		l.MaxSeriesPerRequest = d.MaxSeriesPerRequest
	}
	if l.MaxNewSeriesPerMinute == 0 {
		l.MaxNewSeriesPerMinute = d.MaxNewSeriesPerMinute
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
	case l.MaxLabelsPerSeries <= 0 || l.MaxLabelNameLength <= 0 || l.MaxLabelValueLength <= 0:
		return errors.New("ingest: max_labels_per_series, max_label_name_length and max_label_value_length must be positive")
	case l.MaxSeriesPerRequest <= 0 || l.MaxNewSeriesPerMinute <= 0:
		return errors.New("ingest: max_series_per_request and max_new_series_per_minute must be positive")
	case l.RetryAfter < time.Second:
		return errors.New("ingest: retry_after must be at least 1s (Retry-After has second resolution)")
	}
	return nil
}
