package server

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"
)

// HubConfig makes this server a hub: it registers member clusters (other
// HeteroFlow servers), shows them side by side, places tasks on the best
// one and fans PromQL out over them (controlplane/hub).
type HubConfig struct {
	Enabled bool `yaml:"enabled"`
	// PollInterval between the hub leader's polls of every member.
	PollInterval Duration `yaml:"poll_interval"`
	// Timeout of one call to a member.
	Timeout Duration `yaml:"timeout"`
}

// Environment and flags of the hub settings.
const (
	EnvHub  = "HETEROFLOW_HUB"
	FlagHub = "hub"
	// hubKeyFile seals the members' API keys on a server without HA (with
	// HA the shared HA secret key does).
	hubKeyFile = "hub.key"
)

// UnmarshalYAML accepts `hub: true` as well as the mapping
// (hub: {enabled: true, poll_interval: 10s}); unknown keys are errors, as
// everywhere in the file.
func (h *HubConfig) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		return n.Decode(&h.Enabled)
	}
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: hub must be true, false or a mapping (enabled, poll_interval, timeout)", n.Line)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		switch k := n.Content[i].Value; k {
		case "enabled", "poll_interval", "timeout":
		default:
			return fmt.Errorf("line %d: field %s not found in hub (enabled, poll_interval, timeout)", n.Content[i].Line, k)
		}
	}
	type plain HubConfig // without this method
	return n.Decode((*plain)(h))
}

func hubDefaults() HubConfig {
	return HubConfig{PollInterval: Duration(10 * time.Second), Timeout: Duration(10 * time.Second)}
}

func (h HubConfig) validate() []error {
	var errs []error
	if h.PollInterval < Duration(time.Second) || h.PollInterval > Duration(time.Hour) {
		errs = append(errs, fmt.Errorf("hub.poll_interval %s must be between 1s and 1h / hub.poll_interval 必须在 1s 到 1h 之间", time.Duration(h.PollInterval)))
	}
	if h.Timeout < Duration(time.Second) || h.Timeout > Duration(5*time.Minute) {
		errs = append(errs, fmt.Errorf("hub.timeout %s must be between 1s and 5m / hub.timeout 必须在 1s 到 5m 之间", time.Duration(h.Timeout)))
	}
	return errs
}

func applyHubEnv(c *Config, getenv func(string) string) error {
	if v := getenv(EnvHub); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("%s=%q is not a boolean", EnvHub, v)
		}
		c.Hub.Enabled = b
	}
	return nil
}

func registerHubFlags(fs *pflag.FlagSet) {
	fs.Bool(FlagHub, false, "run as a multi-cluster hub: register member clusters, place tasks across them, federate PromQL / 作为多集群中枢运行：注册成员集群、跨集群调度、联邦 PromQL 查询")
}

func applyHubFlags(fs *pflag.FlagSet, c *Config) error {
	if !fs.Changed(FlagHub) {
		return nil
	}
	var err error
	c.Hub.Enabled, err = fs.GetBool(FlagHub)
	return err
}

// Sealer returns what seals secrets kept in the database (a hub's member
// API keys): the HA secret key with HA, else a key of this server's data
// directory (<data_dir>/hub.key, created 0600 on first use). A copy of
// the database alone opens neither.
func (s *Server) Sealer() (*Sealer, error) {
	if s.sealer != nil {
		return s.sealer, nil
	}
	path := filepath.Join(s.cfg.DataDir, hubKeyFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		key := make([]byte, 32)
		_, _ = rand.Read(key)
		b = []byte(base64.StdEncoding.EncodeToString(key))
		if err := os.WriteFile(path, b, 0o600); err != nil {
			return nil, fmt.Errorf("hub sealing key: %w", err)
		}
	} else if err != nil {
		return nil, fmt.Errorf("hub sealing key: %w", err)
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(key) < 32 {
		return nil, fmt.Errorf("hub sealing key %s must be base64 of 32 bytes", path)
	}
	if s.sealer, err = NewSealer(key[:32]); err != nil {
		return nil, err
	}
	return s.sealer, nil
}

// SetFederatedQuery makes h answer /prometheus/api/v1/query and
// query_range (paths as under /prometheus) instead of this server's own
// metrics store: a hub's cross-cluster PromQL.
func (s *Server) SetFederatedQuery(h http.Handler) { s.federated.Store(&h) }

// promQuery routes the federated endpoints to the handler set by
// SetFederatedQuery and everything else to next.
func (s *Server) promQuery(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f := s.federated.Load(); f != nil && (r.URL.Path == "/api/v1/query" || r.URL.Path == "/api/v1/query_range") {
			(*f).ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// federatedHandler is the handler SetFederatedQuery stored.
type federatedHandler = atomic.Pointer[http.Handler]
