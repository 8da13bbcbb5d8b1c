package forward

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/golang/snappy"
	"github.com/prometheus/prometheus/prompb"
	"github.com/prometheus/prometheus/storage"

	"github.com/heteroflow/heteroflow/controlplane/metricstore/ingest"
	"github.com/heteroflow/heteroflow/controlplane/metricstore/query"
)

// Config addresses the external store's remote-write endpoint.
type Config struct {
	// URL is the full remote-write URL, e.g. http://prometheus:9090/api/v1/write
	// or http://victoria:8428/api/v1/write.
	URL         string `yaml:"url" json:"url"`
	Username    string `yaml:"username" json:"username"`
	Password    string `yaml:"password" json:"-"`
	BearerToken string `yaml:"bearer_token" json:"-"`
	// Timeout bounds one attempt. Zero means 30s.
	Timeout time.Duration `yaml:"timeout" json:"timeout"`
	// Attempts is how many times a retryable failure (network, 5xx, 429) is
	// tried before the push is answered 503. Zero means 3.
	Attempts int `yaml:"attempts" json:"attempts"`
}

// Forwarder implements storage.AppendableV2 by remote-write.
type Forwarder struct {
	url      string
	client   *http.Client
	attempts int
	backoff  time.Duration
}

var _ storage.AppendableV2 = (*Forwarder)(nil)

// New validates cfg and builds a Forwarder. transport may be nil.
func New(cfg Config, transport http.RoundTripper) (*Forwarder, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("forward: url %q must be an absolute http(s) URL", cfg.URL)
	}
	if cfg.BearerToken != "" && (cfg.Username != "" || cfg.Password != "") {
		return nil, errors.New("forward: set either basic auth or a bearer token, not both")
	}
	if transport == nil {
		transport = http.DefaultTransport
	}
	timeout := cfg.Timeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	attempts := cfg.Attempts
	if attempts == 0 {
		attempts = 3
	}
	return &Forwarder{
		url:      cfg.URL,
		client:   &http.Client{Timeout: timeout, Transport: query.AuthTransport(transport, cfg.Username, cfg.Password, cfg.BearerToken)},
		attempts: attempts,
		backoff:  100 * time.Millisecond,
	}, nil
}

// AppenderV2 implements storage.AppendableV2.
func (f *Forwarder) AppenderV2(ctx context.Context) storage.AppenderV2 {
	return &appender{f: f, ctx: ctx, index: map[uint64][]int{}}
}

// send posts one snappy-compressed WriteRequest, retrying what is worth
// retrying within ctx.
func (f *Forwarder) send(ctx context.Context, req *prompb.WriteRequest) error {
	raw, err := req.Marshal()
	if err != nil {
		return fmt.Errorf("forward: encoding write request: %w", err)
	}
	body := snappy.Encode(nil, raw)
	var last error
	for attempt := 0; attempt < f.attempts; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return fmt.Errorf("%w: %w (last error: %w)", ingest.ErrUnavailable, ctx.Err(), last)
			case <-time.After(f.backoff << (2 * (attempt - 1))): // 100ms, 400ms, …
			}
		}
		retry, err := f.post(ctx, body)
		if err == nil {
			return nil
		}
		if !retry {
			return fmt.Errorf("%w: %w", ingest.ErrRejected, err)
		}
		last = err
	}
	return fmt.Errorf("%w: after %d attempts: %w", ingest.ErrUnavailable, f.attempts, last)
}

func (f *Forwarder) post(ctx context.Context, body []byte) (retry bool, err error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, f.url, bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	hr.Header.Set("Content-Encoding", "snappy")
	hr.Header.Set("Content-Type", "application/x-protobuf")
	hr.Header.Set("X-Prometheus-Remote-Write-Version", "0.1.0")
	hr.Header.Set("User-Agent", "heteroflow-forwarder")
	resp, err := f.client.Do(hr)
	if err != nil {
		return true, err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	switch {
	case resp.StatusCode/100 == 2:
		return false, nil
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode/100 == 5:
		return true, fmt.Errorf("remote store answered %s: %s", resp.Status, bytes.TrimSpace(msg))
	default:
		return false, fmt.Errorf("remote store answered %s: %s", resp.Status, bytes.TrimSpace(msg))
	}
}
