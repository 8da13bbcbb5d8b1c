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
	"strings"
	"sync/atomic"
	"time"
)

// client talks to the server's agent API.
type client struct {
	base string
	key  string
	http *http.Client
	// certOnly: the node has a client certificate, so the API key is not
	// sent; it is only used (from then on) if the server answers 401,
	// e.g. after an operator turned mTLS off.
	certOnly bool
	keyOn    atomic.Bool
}

// errPermanent marks answers that a retry cannot fix (4xx other than 408/429).
var errPermanent = errors.New("permanent")

// newClient builds the API client; tc (nil for plain HTTP or the system
// roots) carries the server trust and the node's client certificate.
func newClient(base, key string, poll time.Duration, tc *tls.Config) *client {
	var rt http.RoundTripper = http.DefaultTransport
	if tc != nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.TLSClientConfig = tc
		rt = t
	}
	return &client{base: strings.TrimRight(base, "/"), key: key,
		// The long-poll answers within PollWait; leave room for a slow server.
		http: &http.Client{Timeout: poll + 30*time.Second, Transport: rt}}
}

// withCert makes c authenticate with its TLS client certificate only.
func (c *client) withCert() *client { c.certOnly = true; return c }

func (c *client) send(ctx context.Context, method, path string, body []byte) (*http.Response, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.key != "" && (!c.certOnly || c.keyOn.Load()) {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := c.http.Do(req)
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
	resp, raw, err := c.send(ctx, method, path, body)
	if err == nil && resp.StatusCode == http.StatusUnauthorized && c.certOnly && c.key != "" && !c.keyOn.Load() {
		c.keyOn.Store(true)
		resp, raw, err = c.send(ctx, method, path, body)
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
