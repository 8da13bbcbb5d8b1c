package metricstore

import (
	"errors"
	"fmt"
	"time"

	"github.com/heteroflow/heteroflow/controlplane/metricstore/forward"
	"github.com/heteroflow/heteroflow/controlplane/metricstore/ingest"
	"github.com/heteroflow/heteroflow/controlplane/metricstore/query"
)

// Modes of the metrics store.
const (
	ModeEmbedded = "embedded"
	ModeRemote   = "remote"
)

// Config is the `metrics:` section of the server's YAML.
type Config struct {
	// Mode is "embedded" (own TSDB, the default) or "remote".
	Mode string `yaml:"mode" json:"mode"`
	// Dir holds the TSDB (blocks, WAL, queries.active); the server sets it
	// to <data dir>/metrics. Embedded mode only.
	Dir string `yaml:"dir" json:"dir"`
	// Retention drops blocks older than this.
	Retention time.Duration `yaml:"retention" json:"retention"`
	// RetentionSize drops the oldest blocks once the TSDB exceeds this many
	// bytes (WAL and chunks included); 0 means no size limit.
	RetentionSize int64 `yaml:"retention_size" json:"retention_size"`
	// OutOfOrderWindow accepts samples this much older than a series'
	// newest sample, as Prometheus' out_of_order_time_window does; agents
	// that retry after a network cut need it. 0 rejects out-of-order samples.
	OutOfOrderWindow time.Duration `yaml:"out_of_order_window" json:"out_of_order_window"`
	// WALCompression compresses WAL records with snappy.
	WALCompression bool `yaml:"wal_compression" json:"wal_compression"`

	Query  QueryConfig   `yaml:"query" json:"query"`
	Ingest ingest.Limits `yaml:"ingest" json:"ingest"`
	// PromoteResourceAttributes: OTLP resource attributes made labels.
	PromoteResourceAttributes []string `yaml:"promote_resource_attributes,omitempty" json:"promote_resource_attributes,omitempty"`

	// SelfIngestInterval is how often the server's own /metrics registry is
	// written into the store; 0 disables self-ingestion.
	SelfIngestInterval time.Duration `yaml:"self_ingest_interval" json:"self_ingest_interval"`

	// Remote is used in remote mode only.
	Remote RemoteConfig `yaml:"remote" json:"remote"`
}

// QueryConfig bounds the embedded PromQL engine.
type QueryConfig struct {
	Timeout       time.Duration `yaml:"timeout" json:"timeout"`
	MaxSamples    int           `yaml:"max_samples" json:"max_samples"`
	MaxConcurrent int           `yaml:"max_concurrent" json:"max_concurrent"`
	LookbackDelta time.Duration `yaml:"lookback_delta" json:"lookback_delta"`
}

// RemoteConfig addresses the external store: its query API and its
// remote-write receiver, with one set of credentials for both.
type RemoteConfig struct {
	// QueryURL is the API root, e.g. http://prometheus:9090.
	QueryURL string `yaml:"query_url" json:"query_url"`
	// WriteURL is the remote-write endpoint, e.g. http://prometheus:9090/api/v1/write.
	WriteURL    string        `yaml:"write_url" json:"write_url"`
	Username    string        `yaml:"username" json:"username"`
	Password    string        `yaml:"password" json:"-"`
	BearerToken string        `yaml:"bearer_token" json:"-"`
	Timeout     time.Duration `yaml:"timeout" json:"timeout"`
}

// Defaults returns the configuration `heteroflow server` starts with:
// Prometheus' own defaults where it has them (15d retention, 2m query
// timeout, 50M samples, 20 concurrent queries, 5m lookback).
func Defaults() Config {
	return Config{
		Mode:             ModeEmbedded,
		Dir:              "data/metrics",
		Retention:        15 * 24 * time.Hour,
		OutOfOrderWindow: 30 * time.Minute,
		WALCompression:   true,
		// Queries time out well before the API's 120 s write timeout, so a
		// long query answers a JSON timeout error; 20M samples (~320 MB of
		// points) per query and 8 queries at once fit a small server.
		Query:              QueryConfig{Timeout: 90 * time.Second, MaxSamples: 20_000_000, MaxConcurrent: 8, LookbackDelta: 5 * time.Minute},
		Ingest:             ingest.DefaultLimits(),
		SelfIngestInterval: 15 * time.Second,
		Remote:             RemoteConfig{Timeout: 30 * time.Second},
	}
}

// Validate reports the first invalid field.
func (c Config) Validate() error {
	if err := c.Ingest.Validate(); err != nil {
		return err
	}
	if c.SelfIngestInterval < 0 || (c.SelfIngestInterval > 0 && c.SelfIngestInterval < time.Second) {
		return errors.New("metrics: self_ingest_interval must be 0 (off) or at least 1s")
	}
	switch c.Mode {
	case ModeEmbedded:
		return c.validateEmbedded()
	case ModeRemote:
		return c.validateRemote()
	default:
		return fmt.Errorf("metrics: mode %q must be %q or %q", c.Mode, ModeEmbedded, ModeRemote)
	}
}

func (c Config) validateEmbedded() error {
	switch {
	case c.Dir == "":
		return errors.New("metrics: dir is required in embedded mode")
	case c.Retention < time.Hour && c.RetentionSize <= 0:
		return errors.New("metrics: retention must be at least 1h, or set retention_size")
	case c.Retention < 0 || c.RetentionSize < 0:
		return errors.New("metrics: retention and retention_size must not be negative")
	case c.OutOfOrderWindow < 0:
		return errors.New("metrics: out_of_order_window must not be negative")
	case c.Query.Timeout <= 0:
		return errors.New("metrics: query.timeout must be positive")
	case c.Query.MaxSamples <= 0:
		return errors.New("metrics: query.max_samples must be positive")
	case c.Query.MaxConcurrent <= 0:
		return errors.New("metrics: query.max_concurrent must be positive")
	case c.Query.LookbackDelta <= 0:
		return errors.New("metrics: query.lookback_delta must be positive")
	}
	return nil
}

func (c Config) validateRemote() error {
	if _, err := query.NewRemote(c.remoteQuery(), nil); err != nil {
		return fmt.Errorf("metrics: remote.query_url: %w", err)
	}
	if _, err := forward.New(c.remoteWrite(), nil); err != nil {
		return fmt.Errorf("metrics: remote.write_url: %w", err)
	}
	return nil
}

func (c Config) remoteQuery() query.RemoteConfig {
	r := c.Remote
	return query.RemoteConfig{URL: r.QueryURL, Username: r.Username, Password: r.Password, BearerToken: r.BearerToken, Timeout: c.Query.Timeout}
}

func (c Config) remoteWrite() forward.Config {
	r := c.Remote
	return forward.Config{URL: r.WriteURL, Username: r.Username, Password: r.Password, BearerToken: r.BearerToken, Timeout: r.Timeout}
}
