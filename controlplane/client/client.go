package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
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

// Client talks to one server.
type Client struct {
	base   string
	http   *http.Client
	apiKey string

	mu        sync.Mutex
	creds     *Credentials
	credsPath string // where refreshed credentials are saved; "" = don't
}

// New returns a client for server (e.g. http://localhost:3333).
func New(server string, hc *http.Client) (*Client, error) {
	u, err := url.Parse(server)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("server %q must be a URL like http://localhost:3333", server)
	}
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	return &Client{base: strings.TrimRight(server, "/"), http: hc}, nil
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
	cr := &Credentials{Server: c.base, Username: s.User.Username, AccessToken: s.AccessToken, RefreshToken: s.RefreshToken,
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
	c.mu.Lock()
	expired := c.apiKey == "" && c.creds != nil && time.Now().After(c.creds.ExpiresAt.Add(-10*time.Second))
	c.mu.Unlock()
	if expired {
		if err := c.refresh(ctx); err != nil {
			return err
		}
	}
	err := c.do(ctx, method, path, in, out, true)
	var ae *Error
	if errors.As(err, &ae) && ae.Status == http.StatusUnauthorized && c.apiKey == "" && c.creds != nil {
		if rerr := c.refresh(ctx); rerr != nil {
			return rerr
		}
		return c.do(ctx, method, path, in, out, true)
	}
	return err
}

func (c *Client) do(ctx context.Context, method, path string, in, out any, authed bool) error {
	return c.doHeader(ctx, method, path, nil, in, out, authed)
}

// doHeader is do with extra request headers (nil for none).
func (c *Client) doHeader(ctx context.Context, method, path string, hdr http.Header, in, out any, authed bool) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return err
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if tok := c.token(); authed && tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	res, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("%s %s: read response: %w", method, path, err)
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
