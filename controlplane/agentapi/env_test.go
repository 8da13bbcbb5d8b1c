package agentapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/auth"
	"github.com/heteroflow/heteroflow/controlplane/httpapi"
	"github.com/heteroflow/heteroflow/controlplane/postgres"
	"github.com/heteroflow/heteroflow/controlplane/postgres/pgtest"
	"github.com/heteroflow/heteroflow/controlplane/sqlite"
)

// env is a real server stack on SQLite (PostgreSQL with
// HETEROFLOW_TEST_STORE=postgres): auth, the REST API with this package's
// routes, and an admin API key.
type env struct {
	t        *testing.T
	db       Store
	svc      *Service
	srv      *httptest.Server
	reg      *prometheus.Registry
	adminKey string
	admin    *controlplane.User
}

func newEnv(t *testing.T, o Options) *env {
	t.Helper()
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	var db Store
	if pgtest.Selected() {
		db = pgtest.OpenWith(t, postgres.Options{Logger: log})
	} else {
		sdb, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "hf.db"), sqlite.Options{Logger: log})
		require.NoError(t, err)
		t.Cleanup(func() { sdb.Close() })
		db = sdb
	}
	key, err := auth.LoadOrCreateSigningKey(ctx, db)
	require.NoError(t, err)
	cfg := auth.DefaultConfig()
	cfg.SigningKey = key
	as, err := auth.New(db, cfg, log)
	require.NoError(t, err)
	admin := &controlplane.User{Username: "admin", Role: controlplane.RoleAdmin, Status: controlplane.UserActive}
	require.NoError(t, db.CreateUser(ctx, admin))
	adminKey, _, err := as.CreateAPIKey(ctx, &auth.Principal{UserID: admin.ID, Username: "admin", Role: controlplane.RoleAdmin},
		"test", controlplane.RoleAdmin, "", nil)
	require.NoError(t, err)
	auditor := httpapi.NewAuditor(db, log, httpapi.AuditorOptions{})
	t.Cleanup(auditor.Close)
	reg := prometheus.NewRegistry()
	api, err := httpapi.New(httpapi.Options{Store: db, Auth: as, Auditor: auditor, Logger: log, Registry: reg})
	require.NoError(t, err)
	o.Store, o.Auth, o.Logger, o.Registry = db, as, log, reg
	svc, err := New(o)
	require.NoError(t, err)
	svc.Mount(api)
	runCtx, cancel := context.WithCancel(ctx)
	go svc.Run(runCtx)
	srv := httptest.NewServer(api)
	t.Cleanup(func() { cancel(); srv.Close() })
	return &env{t: t, db: db, svc: svc, srv: srv, reg: reg, adminKey: adminKey, admin: admin}
}

// call sends a JSON request with key and decodes the answer into out.
func (e *env) call(method, path, key string, body, out any) int {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(e.t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, rd)
	require.NoError(e.t, err)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(e.t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(e.t, err)
	if out != nil && len(raw) > 0 && resp.StatusCode < 300 {
		require.NoError(e.t, json.Unmarshal(raw, out), string(raw))
	}
	if out == nil && resp.StatusCode >= 400 {
		e.t.Logf("%s %s → %d %s", method, path, resp.StatusCode, raw)
	}
	return resp.StatusCode
}

// queuedTask creates a task and moves it to queued, as the API + scheduler would.
func (e *env) queuedTask(cmd ...string) *controlplane.Task {
	e.t.Helper()
	ctx := context.Background()
	t := &controlplane.Task{Spec: controlplane.TaskSpec{Name: "t", Command: cmd}, OwnerID: e.admin.ID}
	require.NoError(e.t, e.db.CreateTask(ctx, t))
	_, err := e.db.TransitionTask(ctx, controlplane.Transition{TaskID: t.ID, From: controlplane.TaskSubmitted,
		To: controlplane.TaskQueued, Actor: "test"})
	require.NoError(e.t, err)
	return t
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
