package app

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/agent/protocol"
	"github.com/heteroflow/heteroflow/controlplane/server"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

const (
	adminPassword = "Root-Password-123"
	testPassword  = "Test-Password-123"
)

// testServer is the assembled control plane listening on random ports
// over a SQLite store and an embedded TSDB in dir.
type testServer struct {
	t    testing.TB
	app  *App
	base string
	http *http.Client
}

// startServer starts App on dir (a fresh or a previously used data dir)
// and shuts it down when the test ends, unless the test did already.
func startServer(t testing.TB, dir string) *testServer {
	t.Helper()
	return startServerWith(t, dir, nil)
}

// startServerWith is startServer with a configuration change.
func startServerWith(t testing.TB, dir string, mod func(*server.Config)) *testServer {
	t.Helper()
	return startServerVersion(t, dir, "app-test", mod)
}

// startServerVersion is startServerWith for a server reporting version.
func startServerVersion(t testing.TB, dir, version string, mod func(*server.Config)) *testServer {
	t.Helper()
	cfg := server.Defaults()
	cfg.APIAddr, cfg.ConsoleAddr = "127.0.0.1:0", "127.0.0.1:0" // mod may choose the API address (a restart on it)
	if mod != nil {
		mod(&cfg)
	}
	cfg.DataDir = dir
	// Every role logs in once per walked route (login, refresh): keep the
	// per-IP login limit out of the way of the access walk.
	cfg.Auth.LoginPerMinute = 10000
	cfg.RateLimit.PerMinute = 0 // the walk calls every route as every role at once
	env := map[string]string{server.EnvAdminPassword: adminPassword}
	a, err := New(t.Context(), cfg, server.Options{Logger: slog.New(slog.DiscardHandler), Stderr: io.Discard,
		Getenv: func(k string) string { return env[k] }, Version: version})
	require.NoError(t, err)
	require.NoError(t, a.Start())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, a.Shutdown(ctx))
	})
	return &testServer{t: t, app: a, base: "http://" + a.APIAddr(), http: &http.Client{Timeout: 30 * time.Second}}
}

// stop shuts the server down now (a restart test reopens its data dir).
func (s *testServer) stop() {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(s.t, s.app.Shutdown(ctx))
}

// reply is one HTTP answer, read in full.
type reply struct {
	Status int
	Body   []byte
	Header http.Header
}

// errorBody is the contract's error shape.
type errorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// do sends body as JSON (none when nil) with cred as bearer credential
// (none when "") and header as name, value pairs, and reads the answer.
func (s *testServer) do(method, path, cred string, body any, header ...string) reply {
	s.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(s.t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(s.t.Context(), method, s.base+path, rd)
	require.NoError(s.t, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if cred != "" {
		req.Header.Set("Authorization", "Bearer "+cred)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := s.http.Do(req)
	require.NoError(s.t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(s.t, err)
	return reply{Status: res.StatusCode, Body: b, Header: res.Header}
}

// ok sends the request, requires want and decodes the answer into out.
func (s *testServer) ok(want int, method, path, cred string, body, out any) {
	s.t.Helper()
	r := s.do(method, path, cred, body)
	require.Equal(s.t, want, r.Status, "%s %s: %s", method, path, r.Body)
	if out != nil {
		require.NoError(s.t, json.Unmarshal(r.Body, out), string(r.Body))
	}
}

// fails sends the request and requires status with the contract's error
// shape: a code and a non-empty message.
func (s *testServer) fails(status int, code, method, path, cred string, body any) string {
	s.t.Helper()
	r := s.do(method, path, cred, body)
	require.Equal(s.t, status, r.Status, "%s %s: %s", method, path, r.Body)
	var e errorBody
	require.NoError(s.t, json.Unmarshal(r.Body, &e), string(r.Body))
	require.Equal(s.t, code, e.Error.Code, string(r.Body))
	require.NotEmpty(s.t, e.Error.Message)
	return e.Error.Message
}

// login returns an access token (and the refresh token).
func (s *testServer) login(username, password string) (access, refresh string) {
	s.t.Helper()
	var out struct {
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
	}
	s.ok(http.StatusOK, http.MethodPost, "/api/v1/auth/login", "", map[string]string{"username": username, "password": password}, &out)
	require.NotEmpty(s.t, out.AccessToken)
	return out.AccessToken, out.RefreshToken
}

// adminToken logs the bootstrap administrator in.
func (s *testServer) adminToken() string {
	s.t.Helper()
	tok, _ := s.login(server.BootstrapAdmin, adminPassword)
	return tok
}

// userWithRole creates username with role through the API and logs it in.
func (s *testServer) userWithRole(admin, username, role string) (id int64, token string) {
	s.t.Helper()
	var u struct {
		ID int64 `json:"id"`
	}
	s.ok(http.StatusCreated, http.MethodPost, "/api/v1/users", admin,
		map[string]string{"username": username, "password": testPassword, "role": role}, &u)
	tok, _ := s.login(username, testPassword)
	return u.ID, tok
}

// bootstrapToken mints a one-time enrollment token as admin.
func (s *testServer) bootstrapToken(admin string) (id int64, token string) {
	s.t.Helper()
	var out struct {
		ID    int64  `json:"id"`
		Token string `json:"token"`
	}
	s.ok(http.StatusCreated, http.MethodPost, "/api/v1/bootstrap-tokens", admin, map[string]any{"description": "test"}, &out)
	return out.ID, out.Token
}

// enrollBody is an enrollment request for a node with count devices of vendor.
func enrollBody(token, host, vendor string, count int) protocol.EnrollRequest {
	snap := inventory.Snapshot{Vendor: vendor, Devices: []inventory.Device{}}
	for i := range count {
		mem := int64(81920)
		snap.Devices = append(snap.Devices, inventory.Device{Index: i, Model: "H100", MemoryTotalMiB: &mem})
	}
	return protocol.EnrollRequest{Token: token, Hostname: host, OS: "linux", Arch: "amd64", Version: "test",
		Inventory: []inventory.Snapshot{snap}}
}

// enrollNode enrolls a node with count devices of vendor through the API
// (bootstrap token, then enroll) and sends its first heartbeat, which
// brings it online; it returns the node id and the agent's API key.
func (s *testServer) enrollNode(admin, host, vendor string, count int) (nodeID, agentKey string) {
	s.t.Helper()
	_, tok := s.bootstrapToken(admin)
	var out protocol.EnrollResponse
	s.ok(http.StatusCreated, http.MethodPost, "/api/v1/agents/enroll", "", enrollBody(tok, host, vendor, count), &out)
	require.NotEmpty(s.t, out.APIKey)
	s.ok(http.StatusOK, http.MethodPost, "/api/v1/agents/heartbeat", out.APIKey,
		protocol.Heartbeat{Health: "ok", CPUCount: 32, MemoryTotalMiB: 256000, MemoryFreeMiB: 200000, Running: []protocol.RunningTask{}}, nil)
	return out.NodeID, out.APIKey
}
