package server

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/heteroflow/heteroflow/controlplane/auth"
	"github.com/heteroflow/heteroflow/controlplane/metricstore"
	"github.com/heteroflow/heteroflow/controlplane/storeopen"
)

// HAConfig turns on high availability: any number of servers on one
// PostgreSQL database behind any load balancer. Every server serves the
// API and the console; one leader (leases in PostgreSQL) runs the
// scheduler, alert evaluation, notifications, workflows and metering.
// Nothing lives per data directory: the JWT signing key (and the agent CA
// when mTLS generates one) is kept in the database, encrypted with the
// secret key every server is given.
type HAConfig struct {
	Enabled bool `yaml:"enabled"`
	// SecretKeyFile holds the key (base64 of ≥ 32 random bytes, e.g.
	// `openssl rand -base64 32`) that encrypts the shared secrets in the
	// database; every server gets the same file. HETEROFLOW_SECRET_KEY may
	// carry the key itself instead.
	SecretKeyFile string `yaml:"secret_key_file"`
	// LeaseTTL is how long a leader's leases last without renewal; a
	// follower takes over at most this long after the leader dies (the
	// leader renews every third of it). Applies to every leader-only loop,
	// with or without HA.
	LeaseTTL Duration `yaml:"lease_ttl"`
}

// Environment and flags of the HA settings.
const (
	EnvHA        = "HETEROFLOW_HA"
	EnvSecretKey = "HETEROFLOW_SECRET_KEY" // the key itself, base64
	FlagHA       = "ha"
	FlagHAKey    = "ha-secret-key-file"
)

// defaultLeaseTTL keeps failover within 10 s of a leader's death: the
// lease lapses at most 6 s after the last renewal and a follower campaigns
// every scheduler tick (100 ms).
const defaultLeaseTTL = 6 * time.Second

func haDefaults() HAConfig { return HAConfig{LeaseTTL: Duration(defaultLeaseTTL)} }

// validate reports what HA needs and the configuration lacks. The
// messages are bilingual: they end a server start on the operator's
// terminal.
func (h HAConfig) validate(c Config) []error {
	var errs []error
	if h.LeaseTTL < Duration(time.Second) || h.LeaseTTL > Duration(5*time.Minute) {
		errs = append(errs, fmt.Errorf("ha.lease_ttl %s must be between 1s and 5m / ha.lease_ttl 必须在 1s 到 5m 之间", time.Duration(h.LeaseTTL)))
	}
	if !h.Enabled {
		return errs
	}
	if k, err := storeopen.Parse(c.DB, c.DataDir); err == nil && k.Kind != storeopen.KindPostgres {
		errs = append(errs, errors.New("ha.enabled needs PostgreSQL (db: postgres://…): SQLite is one file on one machine and cannot be shared by several servers / "+
			"高可用模式需要 PostgreSQL（db: postgres://…）：SQLite 是单机文件，不能由多台服务器共享"))
	}
	if c.Metrics.Mode != metricstore.ModeRemote {
		errs = append(errs, errors.New("ha.enabled needs metrics.mode: remote (VictoriaMetrics, Prometheus, Thanos or Mimir; see docs/HA.md): the embedded TSDB keeps each server's samples on its own disk / "+
			"高可用模式需要远程指标存储（metrics.mode: remote，VictoriaMetrics、Prometheus、Thanos 或 Mimir，见 docs/HA.md）：内置 TSDB 的样本只在各自服务器的磁盘上"))
	}
	return errs
}

// secretKey returns the HA secret key from HETEROFLOW_SECRET_KEY or
// ha.secret_key_file.
func (h HAConfig) secretKey(getenv func(string) string) ([]byte, error) {
	v, src := strings.TrimSpace(getenv(EnvSecretKey)), EnvSecretKey
	if v == "" && h.SecretKeyFile != "" {
		b, err := os.ReadFile(h.SecretKeyFile)
		if err != nil {
			return nil, fmt.Errorf("ha.secret_key_file: %w", err)
		}
		v, src = strings.TrimSpace(string(b)), h.SecretKeyFile
	}
	if v == "" {
		return nil, errors.New("ha.enabled needs a secret key shared by every server (ha.secret_key_file or " + EnvSecretKey + ", base64 of 32 random bytes: openssl rand -base64 32) / " +
			"高可用模式需要所有服务器共用的密钥（ha.secret_key_file 或 " + EnvSecretKey + "，32 字节随机数的 base64：openssl rand -base64 32）")
	}
	key, err := base64.StdEncoding.DecodeString(v)
	if err != nil || len(key) < 32 {
		return nil, fmt.Errorf("%s must be base64 of at least 32 random bytes (openssl rand -base64 32) / %s 必须是至少 32 字节随机数的 base64", src, src)
	}
	return key[:32], nil
}

func applyHAEnv(c *Config, getenv func(string) string) error {
	if v := getenv(EnvHA); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("%s=%q is not a boolean", EnvHA, v)
		}
		c.HA.Enabled = b
	}
	return nil
}

func registerHAFlags(fs *pflag.FlagSet) {
	fs.Bool(FlagHA, false, "high availability: several servers on one PostgreSQL, remote metrics, shared secrets in the database / 高可用：多台服务器共用 PostgreSQL、远程指标、数据库中共享密钥")
	fs.String(FlagHAKey, "", "file with the key (base64, 32 bytes) that encrypts the shared secrets; the same on every server / 加密共享密钥的密钥文件(base64, 32 字节)，所有服务器相同")
}

func applyHAFlags(fs *pflag.FlagSet, c *Config) error {
	var err error
	if fs.Changed(FlagHA) {
		if c.HA.Enabled, err = fs.GetBool(FlagHA); err != nil {
			return err
		}
	}
	if fs.Changed(FlagHAKey) {
		c.HA.SecretKeyFile, err = fs.GetString(FlagHAKey)
	}
	return err
}

// loadSecrets sets the agent CA and returns the JWT signing key: from the
// data directory on a single server, from the database (sealed with the HA
// secret key) when HA is on, so that no server keeps a secret of its own.
func (s *Server) loadSecrets(ctx context.Context, o Options) ([]byte, error) {
	var err error
	if !s.cfg.HA.Enabled {
		if s.ca, err = s.cfg.loadCA(); err != nil {
			return nil, err
		}
		return auth.LoadOrCreateSigningKeyFile(ctx, s.store, s.cfg.signingKeyFile())
	}
	secret, err := s.cfg.HA.secretKey(o.Getenv)
	if err != nil {
		return nil, err
	}
	sh, err := newSharedSecrets(s.store, secret)
	if err != nil {
		return nil, err
	}
	s.sealer = sh.Sealer
	host, _ := os.Hostname()
	holder := host + "/" + strconv.Itoa(os.Getpid())
	if s.cfg.TLS.MTLS && s.cfg.TLS.ClientCA == "" {
		if s.ca, err = sh.sharedCA(ctx, holder); err != nil {
			return nil, err
		}
	} else if s.ca, err = s.cfg.loadCA(); err != nil {
		return nil, err
	}
	return sh.sharedSigningKey(ctx, holder)
}
