package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/auth"
	"github.com/heteroflow/heteroflow/controlplane/sqlite"
)

// cheapArgon keeps logins fast in tests; the code path is the production one.
var cheapArgon = auth.Argon2Params{Memory: 64, Time: 1, Threads: 1}

const testPassword = "Test-Password-123"

// clock is an adjustable time source shared by store, auth and API.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// env is one API over a real SQLite store in a temp dir, with a user per role.
type env struct {
	t       *testing.T
	store   controlplane.Store
	auth    *auth.Service
	auditor *Auditor
	api     *API
	srv     *httptest.Server
	clock   *clock
	users   map[controlplane.Role]*controlplane.User
	tokens  map[controlplane.Role]string // access token, or API key for agent
	seq     atomic.Int64
}

type envOpt func(*auth.Config, *Options)

func newEnv(t *testing.T, opts ...envOpt) *env {
	t.Helper()
	ctx := context.Background()
	clk := &clock{t: time.Now().UTC().Truncate(time.Second)}
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "hf.db"), sqlite.Options{Now: clk.Now})
	require.NoError(t, err)
	log := slog.New(slog.DiscardHandler)
	auditor := NewAuditor(store, log, AuditorOptions{})
	acfg := auth.Config{SigningKey: bytes.Repeat([]byte("s"), 32), Argon2: cheapArgon, Now: clk.Now,
		LoginLimit: 10000, Audit: func(_ context.Context, e *controlplane.AuditEntry) { auditor.Record(e) }}
	o := Options{Store: store, Auditor: auditor, Logger: log, CORSOrigins: []string{"https://console.example"},
		MaxBodyBytes: 64 << 10, Version: "test", AllowRegistration: true, Now: clk.Now}
	for _, f := range opts {
		f(&acfg, &o)
	}
	svc, err := auth.New(store, acfg, log)
	require.NoError(t, err)
	o.Auth = svc
	api, err := New(o)
	require.NoError(t, err)
	e := &env{t: t, store: store, auth: svc, auditor: auditor, api: api, clock: clk, srv: httptest.NewServer(api),
		users: map[controlplane.Role]*controlplane.User{}, tokens: map[controlplane.Role]string{}}
	t.Cleanup(func() {
		e.srv.Close()
		auditor.Close()
		require.NoError(t, store.Close())
	})
	for _, r := range []controlplane.Role{controlplane.RoleAdmin, controlplane.RoleOperator, controlplane.RoleUser, controlplane.RoleViewer} {
		u := e.createUser(string(r)+"1", r)
		e.users[r] = u
		e.tokens[r] = e.login(u.Username, testPassword)
	}
	admin := &auth.Principal{UserID: e.users[controlplane.RoleAdmin].ID, Username: "admin1", Role: controlplane.RoleAdmin}
	key, _, err := svc.CreateAPIKey(ctx, admin, "agent-key", controlplane.RoleAgent, "node-1", nil)
	require.NoError(t, err)
	e.tokens[controlplane.RoleAgent] = key
	e.users[controlplane.RoleAgent] = e.users[controlplane.RoleAdmin]
	return e
}

func (e *env) createUser(name string, role controlplane.Role) *controlplane.User {
	e.t.Helper()
	h, err := auth.HashPassword(testPassword, cheapArgon)
	require.NoError(e.t, err)
	u := &controlplane.User{Username: name, Role: role, Status: controlplane.UserActive, PasswordHash: h}
	require.NoError(e.t, e.store.CreateUser(context.Background(), u))
	return u
}

func (e *env) login(user, pw string) string {
	e.t.Helper()
	var s SessionJSON
	st := e.call(http.MethodPost, "/api/v1/auth/login", "", map[string]string{"username": user, "password": pw}, &s)
	require.Equal(e.t, http.StatusOK, st)
	return s.AccessToken
}

func (e *env) unique(prefix string) string { return fmt.Sprintf("%s%d", prefix, e.seq.Add(1)) }

// createTask stores a task owned by u directly (viewers cannot submit).
func (e *env) createTask(u *controlplane.User) *controlplane.Task {
	e.t.Helper()
	t := &controlplane.Task{Spec: controlplane.TaskSpec{Name: e.unique("t"), Command: []string{"true"}, QoS: controlplane.QoSBronze},
		OwnerID: u.ID, Owner: u.Username}
	require.NoError(e.t, e.store.CreateTask(context.Background(), t))
	return t
}

// raw sends a request; body may be nil, []byte/string (sent as is) or a value to JSON-encode.
func (e *env) raw(method, path, token string, body any, hdr ...string) *http.Response {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	case string:
		rd = strings.NewReader(b)
	default:
		buf, err := json.Marshal(b)
		require.NoError(e.t, err)
		rd = bytes.NewReader(buf)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, rd)
	require.NoError(e.t, err)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := e.srv.Client().Do(req)
	require.NoError(e.t, err)
	return res
}

// call sends a request and decodes a JSON response into out (if non-nil).
func (e *env) call(method, path, token string, body, out any) int {
	e.t.Helper()
	res := e.raw(method, path, token, body)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(e.t, err)
	if out != nil && len(b) > 0 {
		require.NoError(e.t, json.Unmarshal(b, out), string(b))
	}
	return res.StatusCode
}

// apiErr calls and returns the status and decoded error body.
func (e *env) apiErr(method, path, token string, body any) (int, ErrorInfo) {
	e.t.Helper()
	var out struct {
		Error ErrorInfo `json:"error"`
	}
	st := e.call(method, path, token, body, &out)
	return st, out.Error
}

// audit flushes the auditor and returns entries matching the filter query.
func (e *env) audit(query string) []AuditJSON {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(e.t, e.auditor.Flush(ctx))
	// A fresh token: tests move the clock past the login-time token's expiry.
	tok, _, err := e.auth.Tokens().Issue(e.users[controlplane.RoleAdmin])
	require.NoError(e.t, err)
	var l List[AuditJSON]
	require.Equal(e.t, http.StatusOK, e.call(http.MethodGet, "/api/v1/audit?limit=1000&"+query, tok, nil, &l))
	return l.Items
}
