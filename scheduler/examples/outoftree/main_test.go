package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/scheduler/framework"
	"github.com/heteroflow/heteroflow/scheduler/model"
)

func TestFilterRefusesNodesInMaintenance(t *testing.T) {
	t.Parallel()
	var noArgs framework.Args
	p, err := newMaintenance(noArgs, nil)
	require.NoError(t, err)
	f := p.(framework.FilterPlugin)
	busy := &model.NodeInfo{Node: &model.Node{Name: "a", Labels: map[string]string{"maintenance": "true"}}}
	free := &model.NodeInfo{Node: &model.Node{Name: "b", Labels: map[string]string{"maintenance": "false"}}}
	require.False(t, f.Filter(context.Background(), nil, busy).IsSuccess())
	require.True(t, f.Filter(context.Background(), nil, free).IsSuccess())
}

// TestOutOfTreeServerBuildsAndRunsThePlugin builds this example as its own
// binary, starts it with the profile that enables the plugin, and finds the
// plugin among the live scheduler's plugins through the REST API.
func TestOutOfTreeServerBuildsAndRunsThePlugin(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a server binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "heteroflow-custom")
	build := exec.Command("go", "build", "-o", bin, ".")
	out, err := build.CombinedOutput()
	require.NoError(t, err, string(out))

	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	profile, err := filepath.Abs("profile.yaml")
	require.NoError(t, err)
	cfg := fmt.Sprintf("api_addr: %q\nconsole_addr: \"\"\ndata_dir: %q\nscheduling:\n  profile: %q\n", addr, filepath.Join(dir, "data"), profile)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "server.yaml"), []byte(cfg), 0o600))

	const password = "Out-Of-Tree-Passw0rd!"
	logs := &syncBuffer{}
	srv := exec.Command(bin, "server", "--config", filepath.Join(dir, "server.yaml"))
	srv.Dir, srv.Stdout, srv.Stderr = dir, logs, logs
	srv.Env = append(os.Environ(), "HETEROFLOW_ADMIN_PASSWORD="+password)
	require.NoError(t, srv.Start())
	t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })

	base := "http://" + addr
	require.Eventually(t, func() bool {
		r, err := http.Get(base + "/health")
		if err != nil {
			return false
		}
		_ = r.Body.Close()
		return r.StatusCode == http.StatusOK
	}, 60*time.Second, 200*time.Millisecond, "server did not become healthy:\n%s", logs)

	body, _ := json.Marshal(map[string]string{"username": "admin", "password": password})
	r, err := http.Post(base+"/api/v1/auth/login", "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	var login struct {
		AccessToken string `json:"access_token"`
	}
	require.NoError(t, json.NewDecoder(r.Body).Decode(&login))
	_ = r.Body.Close()
	require.NotEmpty(t, login.AccessToken, logs.String())

	req, _ := http.NewRequest(http.MethodGet, base+"/api/v1/plugins", nil)
	req.Header.Set("Authorization", "Bearer "+login.AccessToken)
	r, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer r.Body.Close()
	var plugins struct {
		Profile string `json:"profile"`
		Items   []struct {
			Name    string   `json:"name"`
			Enabled bool     `json:"enabled"`
			Points  []string `json:"extension_points"`
		} `json:"items"`
	}
	require.NoError(t, json.NewDecoder(r.Body).Decode(&plugins))
	require.Equal(t, "live-with-maintenance", plugins.Profile)
	found := false
	for _, p := range plugins.Items {
		if p.Name == Name {
			found = true
			require.True(t, p.Enabled)
			require.Contains(t, p.Points, "Filter")
		}
	}
	require.True(t, found, "plugin %s not listed: %+v", Name, plugins.Items)
}

// syncBuffer is the server's output, written by exec's copying goroutines
// while the test may print it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
