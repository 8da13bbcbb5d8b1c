package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"
)

// errPartitioned is what a simulated agent's calls fail with while it is
// cut off from the server.
var errPartitioned = errors.New("network partition (simulated)")

// apiClient is a minimal JSON client; cut makes every call fail, as a
// partition does. With several servers (HA) a call that finds its server
// dead (transport error, 502/503) goes on to the next, as agents do.
type apiClient struct {
	bases  []string
	cur    atomic.Int32
	bearer atomic.Value // string
	hc     *http.Client
	cut    atomic.Bool
}

func newAPIClient(base string, hc *http.Client) *apiClient {
	return newMultiClient([]string{base}, 0, hc)
}

// newMultiClient talks to bases, starting with bases[start].
func newMultiClient(bases []string, start int, hc *http.Client) *apiClient {
	c := &apiClient{bases: bases, hc: hc}
	c.cur.Store(int32(start % len(bases)))
	c.bearer.Store("")
	return c
}

type httpError struct {
	Status int
	Body   string
}

func (e *httpError) Error() string { return fmt.Sprintf("HTTP %d: %s", e.Status, e.Body) }

func (c *apiClient) do(ctx context.Context, method, path string, body, out any) error {
	return c.doKeyed(ctx, method, path, "", body, out)
}

// doKeyed is do with an Idempotency-Key ("" = none); a request that fails
// on one server goes to the next with the same key.
func (c *apiClient) doKeyed(ctx context.Context, method, path, key string, body, out any) error {
	if c.cut.Load() {
		return errPartitioned
	}
	var b []byte
	if body != nil {
		var err error
		if b, err = json.Marshal(body); err != nil {
			return err
		}
	}
	start := int(c.cur.Load())
	var err error
	for n := range len(c.bases) {
		i := (start + n) % len(c.bases)
		err = c.doAt(ctx, c.bases[i], method, path, key, b, body != nil, out)
		var he *httpError
		if err == nil || ctx.Err() != nil || (errors.As(err, &he) && he.Status != 502 && he.Status != 503) {
			c.cur.Store(int32(i))
			return err
		}
	}
	return err
}

func (c *apiClient) doAt(ctx context.Context, base, method, path, key string, b []byte, hasBody bool, out any) error {
	var rd io.Reader
	if hasBody {
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	if b := c.bearer.Load().(string); b != "" {
		req.Header.Set("Authorization", "Bearer "+b)
	}
	res, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 8<<20))
	if err != nil {
		return err
	}
	if res.StatusCode >= 300 {
		return &httpError{Status: res.StatusCode, Body: string(raw)}
	}
	if out != nil && len(raw) > 0 {
		return json.Unmarshal(raw, out)
	}
	return nil
}

// retry calls f until it succeeds, ctx ends or the deadline passes.
func retry(ctx context.Context, d time.Duration, f func() error) error {
	deadline := time.Now().Add(d)
	wait := 50 * time.Millisecond
	for {
		err := f()
		if err == nil {
			return nil
		}
		var he *httpError
		if errors.As(err, &he) && he.Status >= 400 && he.Status < 500 && he.Status != 429 && he.Status != 401 {
			return err
		}
		if time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(wait*2, 2*time.Second)
	}
}
