package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/heteroflow/heteroflow/controlplane/apitypes"
)

// Error is an API error response.
type Error struct {
	Status  int
	Code    string
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("%s (HTTP %d): %s", e.Code, e.Status, e.Message) }

// Client talks to one server, or to several servers of one HA control
// plane: requests go to the current one, and a request that could not
// reach it moves to the next (see send).
type Client struct {
	server string   // as given: one URL or a comma-separated list
	bases  []string // the servers' URLs
	cur    atomic.Int32
	http   *http.Client
	apiKey string

	mu        sync.Mutex
	creds     *Credentials
	credsPath string // where refreshed credentials are saved; "" = don't
}

// New returns a client for server (e.g. http://localhost:3333), or for
// the servers of an HA control plane given as a comma-separated list.
func New(server string, hc *http.Client) (*Client, error) {
	var bases []string
	for _, s := range strings.Split(server, ",") {
		s = strings.TrimSpace(s)
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("server %q must be a URL like http://localhost:3333 (several: comma-separated) / 服务器地址须为 http://localhost:3333 形式的 URL（多个用逗号分隔）", s)
		}
		bases = append(bases, strings.TrimRight(s, "/"))
	}
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	return &Client{server: strings.Join(bases, ","), bases: bases, http: hc}, nil
}

// WithAPIKey authenticates every request with key.
func (c *Client) WithAPIKey(key string) *Client { c.apiKey = key; return c }

// WithCredentials authenticates with saved login credentials; refreshed
// tokens are written back to path (if not empty).
func (c *Client) WithCredentials(cr *Credentials, path string) *Client {
	c.creds, c.credsPath = cr, path
	return c
}

// Credentials returns the current login credentials (after refreshes).
func (c *Client) Credentials() *Credentials {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.creds
}

// Login exchanges a username and password for tokens and keeps them.
func (c *Client) Login(ctx context.Context, username, password string) (*Credentials, error) {
	var s apitypes.SessionJSON
	if err := c.do(ctx, http.MethodPost, "/api/v1/auth/login", map[string]string{"username": username, "password": password}, &s, false); err != nil {
		return nil, err
	}
	cr := &Credentials{Server: c.server, Username: s.User.Username, AccessToken: s.AccessToken, RefreshToken: s.RefreshToken,
		ExpiresAt: time.Now().Add(time.Duration(s.ExpiresIn) * time.Second)}
	c.mu.Lock()
	c.creds = cr
	c.mu.Unlock()
	return cr, nil
}

// refresh rotates the refresh token and saves the result.
func (c *Client) refresh(ctx context.Context) error {
	c.mu.Lock()
	cr := c.creds
	c.mu.Unlock()
	if cr == nil || cr.RefreshToken == "" {
		return ErrNotLoggedIn
	}
	var s apitypes.SessionJSON
	if err := c.do(ctx, http.MethodPost, "/api/v1/auth/refresh", map[string]string{"refresh_token": cr.RefreshToken}, &s, false); err != nil {
		return fmt.Errorf("session expired, log in again / 会话已过期，请重新登录: %w", err)
	}
	next := *cr
	next.AccessToken, next.RefreshToken = s.AccessToken, s.RefreshToken
	next.ExpiresAt = time.Now().Add(time.Duration(s.ExpiresIn) * time.Second)
	c.mu.Lock()
	c.creds = &next
	c.mu.Unlock()
	if c.credsPath != "" {
		return SaveCredentials(c.credsPath, &next)
	}
	return nil
}

func (c *Client) token() string {
	if c.apiKey != "" {
		return c.apiKey
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.creds == nil {
		return ""
	}
	return c.creds.AccessToken
}

// Do calls the API with JSON in and out (out *[]byte receives the raw
// body, for downloads). On a 401 with saved credentials it
// refreshes once and retries.
func (c *Client) Do(ctx context.Context, method, path string, in, out any) error {
	return c.doWith(ctx, method, path, in, out, nil)
}

// doWith is Do with extra request headers.
func (c *Client) doWith(ctx context.Context, method, path string, in, out any, hdr http.Header) error {
	c.mu.Lock()
	expired := c.apiKey == "" && c.creds != nil && time.Now().After(c.creds.ExpiresAt.Add(-10*time.Second))
	c.mu.Unlock()
	if expired {
		if err := c.refresh(ctx); err != nil {
			return err
		}
	}
	err := c.send(ctx, method, path, in, out, true, hdr)
	var ae *Error
	if errors.As(err, &ae) && ae.Status == http.StatusUnauthorized && c.apiKey == "" && c.creds != nil {
		if rerr := c.refresh(ctx); rerr != nil {
			return rerr
		}
		return c.send(ctx, method, path, in, out, true, hdr)
	}
	return err
}

func (c *Client) do(ctx context.Context, method, path string, in, out any, authed bool) error {
	return c.send(ctx, method, path, in, out, authed, nil)
}

// doHeader is do with extra request headers (nil for none).
func (c *Client) doHeader(ctx context.Context, method, path string, hdr http.Header, in, out any, authed bool) error {
	return c.send(ctx, method, path, in, out, authed, hdr)
}

// send makes the request on the current server. When it cannot reach
// that server it moves to the next and tries again, at most twice round
// the list: a request that was never sent (connection refused), or one
// whose repeat is harmless (a GET, or a POST with an Idempotency-Key,
// which the server answers with what the first attempt created). A 502,
// 503 or 504 (a load balancer whose backend died) counts as unreachable.
func (c *Client) send(ctx context.Context, method, path string, in, out any, authed bool, hdr http.Header) error {
	var payload []byte
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		payload = b
	}
	repeatable := method == http.MethodGet || method == http.MethodHead || hdr.Get(IdempotencyHeader) != ""
	tries := 2 * len(c.bases)
	if repeatable {
		tries = max(tries, 4) // one server: ride out its restart
	}
	var err error
	for try := 0; try < tries; try++ {
		if try > 0 {
			select {
			case <-ctx.Done():
				return err
			case <-time.After(retryPause(try)):
			}
		}
		cur := int(c.cur.Load())
		var sent bool
		sent, err = c.once(ctx, c.baseURL(), method, path, payload, out, authed, hdr)
		if err == nil || !unreachable(err) || (sent && !repeatable) || ctx.Err() != nil {
			return err
		}
		c.cur.CompareAndSwap(int32(cur), int32((cur+1)%len(c.bases)))
	}
	return err
}

// baseURL is the server requests go to now.
func (c *Client) baseURL() string { return c.bases[int(c.cur.Load())%len(c.bases)] }

// retryPause waits longer on each round: 100 ms, 200 ms, … up to 2 s.
func retryPause(try int) time.Duration {
	return min(time.Duration(try)*100*time.Millisecond, 2*time.Second)
}

// unreachableError is a request that got no answer from its server.
type unreachableError struct{ err error }

func (e *unreachableError) Error() string { return e.err.Error() }
func (e *unreachableError) Unwrap() error { return e.err }

func unreachable(err error) bool {
	var ue *unreachableError
	return errors.As(err, &ue)
}

// Unreachable reports whether err is a request that got no answer from any
// server (refused, timed out, cut off, or a proxy's error page), as opposed
// to an answer of the API: the CLI words the two differently.
func Unreachable(err error) bool { return unreachable(err) }

// once makes one request to base; sent reports whether the request may
// have reached the server (false only when the connection was refused or
// could not be made).
func (c *Client) once(ctx context.Context, base, method, path string, payload []byte, out any, authed bool, hdr http.Header) (sent bool, err error) {
	var body io.Reader
	if payload != nil {
		body = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, body)
	if err != nil {
		return false, err
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if tok := c.token(); authed && tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	res, err := c.http.Do(req)
	if err != nil {
		var op *net.OpError
		sent = !(errors.As(err, &op) && op.Op == "dial")
		return sent, &unreachableError{fmt.Errorf("%s %s%s: %w", method, base, path, err)}
	}
	defer res.Body.Close()
	switch res.StatusCode {
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		if !strings.Contains(res.Header.Get("Content-Type"), "json") {
			// A proxy's answer, not ours (our 503s are JSON: not ready).
			return true, &unreachableError{fmt.Errorf("%s %s%s: HTTP %d from a proxy", method, base, path, res.StatusCode)}
		}
	}
	return true, c.decode(res, method, path, out)
}

// decode reads a response into out, or into an *Error for a 4xx/5xx.
func (c *Client) decode(res *http.Response, method, path string, out any) error {
	b, err := io.ReadAll(io.LimitReader(res.Body, 64<<20))
	if err != nil {
		// The server went away mid-answer.
		return &unreachableError{fmt.Errorf("%s %s: read response: %w", method, path, err)}
	}
	if res.StatusCode >= 400 {
		var eb struct {
			Error apitypes.ErrorInfo `json:"error"`
		}
		if json.Unmarshal(b, &eb) != nil || eb.Error.Code == "" {
			eb.Error = apitypes.ErrorInfo{Code: strconv.Itoa(res.StatusCode), Message: strings.TrimSpace(string(b))}
		}
		return &Error{Status: res.StatusCode, Code: eb.Error.Code, Message: eb.Error.Message}
	}
	if raw, ok := out.(*[]byte); ok {
		*raw = b // a download (CSV, XLSX): the bytes as they came
		return nil
	}
	if out != nil && len(b) > 0 {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("%s %s: decode response: %w", method, path, err)
		}
	}
	return nil
}
