package daemon

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"
)

// client talks to the server's agent API, failing over between the
// control plane's servers (see servers).
type client struct {
	srv *servers
	key string
	// certOnly: the node has a client certificate, so the API key is not
	// sent; it is only used (from then on) if the server answers 401,
	// e.g. after an operator turned mTLS off.
	certOnly bool
	keyOn    atomic.Bool
	// failovers counts calls answered by another endpoint than the one
	// tried first.
	failovers atomic.Int64
}

// errPermanent marks answers that a retry cannot fix (4xx other than 408/429).
var errPermanent = errors.New("permanent")

// newClient builds the API client for base (one URL or a comma list); tc
// (nil for plain HTTP or the system roots) carries the server trust and
// the node's client certificate; lookup resolves names (nil = the system
// resolver).
func newClient(base, key string, poll time.Duration, tc *tls.Config, lookup func(context.Context, string) ([]string, error)) *client {
	// The long-poll answers within PollWait; leave room for a slow server.
	return &client{srv: newServers(Config{Server: base}.ServerList(), poll+30*time.Second, tc, lookup), key: key}
}

// withCert makes c authenticate with its TLS client certificate only.
func (c *client) withCert() *client { c.certOnly = true; return c }

// baseURL is the server the client talks to now.
func (c *client) baseURL() string { return c.srv.current() }

// send tries the endpoints in turn, starting with the one that answered
// last, until one answers with something other than "unavailable"; a
// transport error or 502/503/504 moves on to the next. Every agent call
// is safe to repeat (heartbeats, idempotent status by sequence, polls).
func (c *client) send(ctx context.Context, method, path string, body []byte, hdr http.Header) (*http.Response, []byte, error) {
	eps, start := c.srv.snapshot(ctx)
	var lastResp *http.Response
	var lastRaw []byte
	var lastErr error
	for n := range len(eps) {
		i := (start + n) % len(eps)
		resp, raw, err := c.sendTo(ctx, eps[i], method, path, body, hdr)
		if err == nil && !unavailable(resp.StatusCode) {
			if n > 0 {
				c.failovers.Add(1)
			}
			c.srv.answered(eps, i)
			return resp, raw, nil
		}
		lastResp, lastRaw, lastErr = resp, raw, err
		if err != nil && !transient(ctx, err) {
			return nil, nil, err
		}
	}
	c.srv.failed()
	return lastResp, lastRaw, lastErr
}

func (c *client) sendTo(ctx context.Context, ep endpoint, method, path string, body []byte, hdr http.Header) (*http.Response, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, ep.base+path, rd)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header[k] = v
	}
	if c.key != "" && (!c.certOnly || c.keyOn.Load()) {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := ep.http.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	return resp, raw, err
}

func (c *client) do(ctx context.Context, method, path string, in, out any) error {
	var body []byte
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = b
	}
	resp, raw, err := c.send(ctx, method, path, body, nil)
	if err == nil && resp.StatusCode == http.StatusUnauthorized && c.certOnly && c.key != "" && !c.keyOn.Load() {
		c.keyOn.Store(true)
		resp, raw, err = c.send(ctx, method, path, body, nil)
	}
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		var e struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		_ = json.Unmarshal(raw, &e)
		err := fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, e.Error.Message)
		if resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != 408 && resp.StatusCode != 429 {
			err = fmt.Errorf("%w: %w", errPermanent, err)
		}
		return err
	}
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("%s %s: decode answer: %w", method, path, err)
		}
	}
	return nil
}
