package query

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
)

// RemoteConfig addresses a Prometheus-compatible HTTP API.
type RemoteConfig struct {
	// URL is the API root without /api/v1, e.g. http://prometheus:9090 or
	// http://victoria:8428 (VictoriaMetrics serves /api/v1 at its root too).
	URL string `yaml:"url" json:"url"`
	// Username and Password select basic auth; BearerToken selects bearer
	// auth. At most one of the two may be set.
	Username    string `yaml:"username" json:"username"`
	Password    string `yaml:"password" json:"-"`
	BearerToken string `yaml:"bearer_token" json:"-"`
	// Timeout bounds one query, both on the wire and as the server-side
	// ?timeout= parameter. Zero means 2 minutes, Prometheus' default.
	Timeout time.Duration `yaml:"timeout" json:"timeout"`
}

// Remote evaluates PromQL on an external Prometheus-compatible store.
type Remote struct {
	api     v1.API
	timeout time.Duration
}

var _ Querier = (*Remote)(nil)

// NewRemote builds a Remote. transport may be nil (http.DefaultTransport).
func NewRemote(cfg RemoteConfig, transport http.RoundTripper) (*Remote, error) {
	if cfg.URL == "" {
		return nil, errors.New("remote query: url is required")
	}
	if cfg.BearerToken != "" && (cfg.Username != "" || cfg.Password != "") {
		return nil, errors.New("remote query: set either basic auth or a bearer token, not both")
	}
	if transport == nil {
		transport = http.DefaultTransport
	}
	timeout := cfg.Timeout
	if timeout == 0 {
		timeout = 2 * time.Minute
	}
	c, err := api.NewClient(api.Config{Address: cfg.URL, RoundTripper: AuthTransport(transport, cfg.Username, cfg.Password, cfg.BearerToken)})
	if err != nil {
		return nil, fmt.Errorf("remote query: %w", err)
	}
	return &Remote{api: v1.NewAPI(c), timeout: timeout}, nil
}

// Instant implements Querier.
func (r *Remote) Instant(ctx context.Context, expr string, ts time.Time) (model.Vector, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	val, _, _, err := r.api.Query(ctx, expr, ts, v1.WithTimeout(r.timeout))
	if err != nil {
		return nil, classifyRemote(err)
	}
	switch v := val.(type) {
	case model.Vector:
		return v, nil
	case *model.Scalar:
		return model.Vector{{Metric: model.Metric{}, Value: v.Value, Timestamp: v.Timestamp}}, nil
	default:
		return nil, fmt.Errorf("%w: instant query returned %s, want vector or scalar", ErrInvalidQuery, val.Type())
	}
}

// Range implements Querier.
func (r *Remote) Range(ctx context.Context, expr string, start, end time.Time, step time.Duration) (model.Matrix, error) {
	if err := validateRange(start, end, step); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	val, _, _, err := r.api.QueryRange(ctx, expr, v1.Range{Start: start, End: end, Step: step}, v1.WithTimeout(r.timeout))
	if err != nil {
		return nil, classifyRemote(err)
	}
	m, ok := val.(model.Matrix)
	if !ok {
		return nil, fmt.Errorf("%w: range query returned %s, want matrix", ErrInvalidQuery, val.Type())
	}
	return m, nil
}

// classifyRemote maps client_golang's error types onto the sentinels.
func classifyRemote(err error) error {
	var apiErr *v1.Error
	if errors.As(err, &apiErr) {
		switch apiErr.Type {
		case v1.ErrBadData:
			return fmt.Errorf("%w: %w", ErrInvalidQuery, err)
		case v1.ErrTimeout, v1.ErrCanceled:
			return fmt.Errorf("%w: %w", ErrTimeout, err)
		case v1.ErrExec, v1.ErrClient, "400", "422":
			// Prometheus reports "too many samples" and type-check
			// failures as execution errors (422); VictoriaMetrics puts the
			// bare status code ("422") in errorType for parse errors. All
			// are the caller's fault: an identical retry cannot succeed.
			return fmt.Errorf("%w: %w", ErrInvalidQuery, err)
		}
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return fmt.Errorf("%w: %w", ErrTimeout, err)
	}
	return fmt.Errorf("%w: %w", ErrUnavailable, err)
}

// AuthTransport adds basic or bearer credentials to every request; with
// neither set it returns next unchanged. It is shared with the remote-write
// forwarder so both directions authenticate the same way.
func AuthTransport(next http.RoundTripper, username, password, bearer string) http.RoundTripper {
	if username == "" && password == "" && bearer == "" {
		return next
	}
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		req = req.Clone(req.Context())
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		} else {
			req.SetBasicAuth(username, password)
		}
		return next.RoundTrip(req)
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
