package server

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"

	"github.com/heteroflow/heteroflow/controlplane/auth/ldapauth"
	"github.com/heteroflow/heteroflow/controlplane/auth/oidcauth"
	"github.com/heteroflow/heteroflow/controlplane/httpapi"
	"github.com/heteroflow/heteroflow/controlplane/metricstore"
	"github.com/heteroflow/heteroflow/controlplane/storeopen"
)

// Config is the whole configuration of `heteroflow server`.
type Config struct {
	APIAddr     string `yaml:"api_addr"`     // REST API, /health, /metrics (authenticated)
	ConsoleAddr string `yaml:"console_addr"` // web console; "" disables it
	// MetricsAddr is an optional separate listener that serves the
	// server's own Prometheus metrics at /metrics without authentication,
	// for a scraper on a private network; "" disables it. On the API
	// listener /metrics needs a token with metrics:read.
	MetricsAddr string `yaml:"metrics_addr"`
	// ExternalURL is the API's address as agents and browsers reach it
	// (behind a proxy or NAT); the console's enrolment command uses it.
	// Empty: the address the browser used, with the API listener's port.
	ExternalURL string `yaml:"external_url"`
	// DB is a store DSN: empty or sqlite://path for the embedded SQLite in
	// DataDir, postgres://… for PostgreSQL.
	DB                string     `yaml:"db"`
	DataDir           string     `yaml:"data_dir"`
	CORSOrigins       []string   `yaml:"cors_origins"`
	AllowRegistration bool       `yaml:"allow_registration"`
	MaxBodyBytes      int64      `yaml:"max_body_bytes"`
	LogLevel          string     `yaml:"log_level"`  // debug, info, warn, error
	LogFormat         string     `yaml:"log_format"` // text, json
	ShutdownTimeout   Duration   `yaml:"shutdown_timeout"`
	Auth              AuthConfig `yaml:"auth"`
	// Metrics is the metrics store: embedded TSDB (default, under
	// <data_dir>/metrics) or a remote Prometheus-compatible store.
	Metrics metricstore.Config `yaml:"metrics"`
	// Scheduling holds the operator's choices for the live scheduler.
	Scheduling SchedulingConfig `yaml:"scheduling"`
	// TLS turns the listeners into HTTPS and optionally enables mTLS for agents.
	TLS TLSConfig `yaml:"tls"`
	// RateLimit is the API's per-caller request budget and PromQL
	// concurrency (per_minute 0 turns the request budget off).
	RateLimit httpapi.RateLimits `yaml:"rate_limit"`
	// Alerts configures the alert engine.
	Alerts AlertsConfig `yaml:"alerts"`
	// Retention bounds the audit log, task logs and task events.
	Retention RetentionConfig `yaml:"retention"`

	// GrafanaURL is the Grafana serving the dashboards/ dashboards; when
	// set, the console links to it. Empty: no link.
	GrafanaURL string `yaml:"grafana_url"`

	// HA runs this server as one of several on one PostgreSQL (ha.go).
	HA HAConfig `yaml:"ha"`

	// Hub makes this server a multi-cluster hub (hub.go).
	Hub HubConfig `yaml:"hub"`
}

// AlertsConfig tunes the alert engine (it runs on the scheduler leader).
type AlertsConfig struct {
	// EvaluationInterval between rule evaluations (default 15s).
	EvaluationInterval Duration `yaml:"evaluation_interval"`
	// RulesDir adds Prometheus rule files (*.yml) to the shipped ones.
	RulesDir string `yaml:"rules_dir"`
	// ExternalURL is the console's address, for links in notifications.
	ExternalURL string `yaml:"external_url"`
}

// SchedulingConfig is what an operator tunes in the live scheduler; the
// rest (tick, lease, backoff) keeps controlplane/scheduling's defaults.
type SchedulingConfig struct {
	// Profile is a scheduler profile YAML (plugins, weights, args); empty
	// uses the built-in live profile.
	Profile string `yaml:"profile"`
	// PreemptMode overrides the Preempt plugin's mode: off, queue-only or
	// preempt-running (brief §5: 禁用 / 仅排队 / 可抢占运行中); empty keeps the profile's.
	PreemptMode string `yaml:"preempt_mode"`
	// AllowDefrag lets POST /api/v1/scheduler/defrag execute moves
	// (preempting and requeueing restartable Bronze tasks).
	AllowDefrag bool `yaml:"allow_defrag"`
	// Defrag is the automatic defragmentation policy (needs AllowDefrag).
	Defrag DefragConfig `yaml:"defrag"`
	// BronzeOvercommit is the memory overcommit ratio of Bronze slices (≥ 1).
	BronzeOvercommit float64 `yaml:"bronze_overcommit"`
	// QueueTimeout fails a task queued longer than this (0 = never).
	QueueTimeout Duration `yaml:"queue_timeout"`
}

// AuthConfig tunes authentication.
type AuthConfig struct {
	AccessTTL       Duration `yaml:"access_ttl"`
	RefreshTTL      Duration `yaml:"refresh_ttl"`
	LoginPerMinute  int      `yaml:"login_per_minute"` // per client IP
	LockoutFailures int      `yaml:"lockout_failures"`
	LockoutDuration Duration `yaml:"lockout_duration"`
	APIKeyCacheTTL  Duration `yaml:"apikey_cache_ttl"`
	// SigningKeyFile holds the JWT signing key (mode 0600), outside the
	// database; empty means <data_dir>/jwt.key. Servers sharing one
	// PostgreSQL database must share this key.
	SigningKeyFile string `yaml:"signing_key_file"`
	// LDAP signs users in against a directory (bind-search-bind); off
	// while auth.ldap.urls is empty.
	LDAP ldapauth.Config `yaml:"ldap"`
	// OIDC lists the OpenID providers of single sign-on (the console's
	// "Sign in with …" buttons).
	OIDC []oidcauth.ProviderConfig `yaml:"oidc,omitempty"`
}

// signingKeyFile is Auth.SigningKeyFile defaulted under DataDir.
func (c Config) signingKeyFile() string {
	if c.Auth.SigningKeyFile != "" {
		return c.Auth.SigningKeyFile
	}
	return filepath.Join(c.DataDir, "jwt.key")
}

// Duration is a time.Duration written as "15m" in YAML.
type Duration time.Duration

func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %q is not a duration like 15m or 24h", n.Line, n.Value)
	}
	*d = Duration(v)
	return nil
}

// Defaults is the one place default values live.
func Defaults() Config {
	return Config{
		APIAddr:         ":3333",
		ConsoleAddr:     ":5173",
		DataDir:         "./data",
		MaxBodyBytes:    1 << 20,
		RateLimit:       httpapi.DefaultRateLimits(),
		LogLevel:        "info",
		LogFormat:       "text",
		ShutdownTimeout: Duration(15 * time.Second),
		Auth: AuthConfig{
			AccessTTL:       Duration(15 * time.Minute),
			RefreshTTL:      Duration(7 * 24 * time.Hour),
			LoginPerMinute:  10,
			LockoutFailures: 10,
			LockoutDuration: Duration(15 * time.Minute),
			APIKeyCacheTTL:  Duration(30 * time.Second),
		},
		Metrics:    metricsDefaults(),
		Scheduling: SchedulingConfig{BronzeOvercommit: 1, QueueTimeout: Duration(24 * time.Hour), Defrag: defaultDefrag()},
		Alerts:     AlertsConfig{EvaluationInterval: Duration(15 * time.Second)},
		HA:         haDefaults(),
		Hub:        hubDefaults(),
		// A year of audit (the usual compliance horizon), a month of task
		// logs within 10 GiB, half a year of task events.
		Retention: RetentionConfig{Interval: Duration(time.Hour),
			AuditMaxAge: Duration(365 * 24 * time.Hour), AuditMaxRows: 10_000_000,
			TaskLogMaxAge: Duration(30 * 24 * time.Hour), TaskLogMaxBytes: 10 << 30,
			TaskEventMaxAge: Duration(180 * 24 * time.Hour), TaskEventMaxRows: 10_000_000},
	}
}

// Validate reports every problem at once, each naming its setting.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	checkAddr := func(name, v string, optional bool) {
		if v == "" && optional {
			return
		}
		if _, _, err := net.SplitHostPort(v); err != nil {
			bad("%s %q must be host:port, e.g. :3333", name, v)
		}
	}
	checkAddr("api_addr", c.APIAddr, false)
	if c.GrafanaURL != "" {
		if u, err := url.Parse(c.GrafanaURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("grafana_url %q must be an http(s):// URL", c.GrafanaURL)
		}
	}
	checkAddr("console_addr", c.ConsoleAddr, true)
	checkAddr("metrics_addr", c.MetricsAddr, true)
	if c.ExternalURL != "" {
		if u, err := url.Parse(c.ExternalURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("external_url %q must be an absolute http:// or https:// URL, e.g. https://hf.example.com:3333", c.ExternalURL)
		}
	}
	if c.DataDir == "" {
		bad("data_dir must not be empty")
	}
	if _, err := storeopen.Parse(c.DB, c.DataDir); err != nil {
		bad("db %q must be empty (embedded SQLite), a SQLite file path or postgres://…", redactDSN(c.DB))
	}
	for _, o := range c.CORSOrigins {
		if o != "*" && !strings.HasPrefix(o, "http://") && !strings.HasPrefix(o, "https://") {
			bad("cors_origins entry %q must be an origin like https://console.example.com", o)
		}
	}
	if c.MaxBodyBytes < 1024 || c.MaxBodyBytes > 64<<20 {
		bad("max_body_bytes %d must be between 1024 and 67108864", c.MaxBodyBytes)
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		bad("log_level %q must be debug, info, warn or error", c.LogLevel)
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		bad("log_format %q must be text or json", c.LogFormat)
	}
	if c.ShutdownTimeout <= 0 {
		bad("shutdown_timeout must be positive")
	}
	a := c.Auth
	if a.AccessTTL < Duration(time.Minute) || a.AccessTTL > Duration(24*time.Hour) {
		bad("auth.access_ttl %s must be between 1m and 24h (access tokens are meant to be short-lived)", time.Duration(a.AccessTTL))
	}
	if a.RefreshTTL <= a.AccessTTL {
		bad("auth.refresh_ttl must be longer than auth.access_ttl")
	}
	if a.LoginPerMinute < 1 {
		bad("auth.login_per_minute must be at least 1")
	}
	if a.LockoutFailures < 1 {
		bad("auth.lockout_failures must be at least 1")
	}
	if a.LockoutDuration <= 0 {
		bad("auth.lockout_duration must be positive")
	}
	if a.APIKeyCacheTTL <= 0 || a.APIKeyCacheTTL > Duration(10*time.Minute) {
		bad("auth.apikey_cache_ttl must be between 0 and 10m (it bounds how long a revoked key keeps working on other servers)")
	}
	if err := a.LDAP.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := oidcauth.ValidateAll(a.OIDC); err != nil {
		errs = append(errs, err)
	}
	switch c.Scheduling.PreemptMode {
	case "", "off", "queue-only", "preempt-running":
	default:
		bad("scheduling.preempt_mode %q must be off, queue-only or preempt-running", c.Scheduling.PreemptMode)
	}
	if c.Scheduling.BronzeOvercommit < 1 || c.Scheduling.BronzeOvercommit > 10 {
		bad("scheduling.bronze_overcommit %g must be between 1 and 10", c.Scheduling.BronzeOvercommit)
	}
	if c.Scheduling.QueueTimeout < 0 {
		bad("scheduling.queue_timeout must not be negative")
	}
	for _, m := range c.Scheduling.Defrag.validate() {
		bad("%s", m)
	}
	if c.Alerts.EvaluationInterval < Duration(time.Second) || c.Alerts.EvaluationInterval > Duration(time.Hour) {
		bad("alerts.evaluation_interval %s must be between 1s and 1h", time.Duration(c.Alerts.EvaluationInterval))
	}
	errs = append(errs, c.TLS.validate()...)
	errs = append(errs, c.HA.validate(c)...)
	errs = append(errs, c.Hub.validate()...)
	errs = append(errs, c.Retention.validate()...)
	if t := c.metricsConfig().Query.Timeout; t > APIWriteTimeout-10*time.Second {
		// Past the write timeout the connection is dropped and the caller
		// never sees the JSON timeout error.
		bad("metrics.query.timeout %s must be at most %s (the API write timeout %s less 10s)", t, APIWriteTimeout-10*time.Second, APIWriteTimeout)
	}
	if c.RateLimit.PerMinute < 0 || c.RateLimit.Burst < 0 || c.RateLimit.AgentPerMinute < 0 || c.RateLimit.QueryConcurrency < 0 {
		bad("rate_limit values must not be negative")
	}
	if err := c.metricsConfig().Validate(); err != nil {
		bad("metrics: %w", err)
	}
	return errors.Join(errs...)
}

// metricsDefaults are metricstore's defaults with the TSDB directory left
// empty, so that it follows data_dir (see metricsConfig) unless set.
func metricsDefaults() metricstore.Config {
	m := metricstore.Defaults()
	m.Dir = ""
	return m
}

// metricsConfig is Metrics with the TSDB directory defaulted under DataDir.
func (c Config) metricsConfig() metricstore.Config {
	m := c.Metrics
	if m.Dir == "" && c.DataDir != "" {
		m.Dir = filepath.Join(c.DataDir, "metrics")
	}
	return m
}

// redactDSN hides a password in a DSN for messages and logs.
func redactDSN(dsn string) string {
	at := strings.LastIndex(dsn, "@")
	scheme := strings.Index(dsn, "://")
	if at < 0 || scheme < 0 || at < scheme {
		return dsn
	}
	creds := dsn[scheme+3 : at]
	if user, _, ok := strings.Cut(creds, ":"); ok {
		return dsn[:scheme+3] + user + ":***" + dsn[at:]
	}
	return dsn
}

// Load builds a Config: Defaults, then the YAML file at path (if any), then
// HETEROFLOW_* variables from getenv. Flags are applied by ApplyFlags.
func Load(path string, getenv func(string) string) (Config, error) {
	c := Defaults()
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return c, fmt.Errorf("read config: %w / 无法读取配置文件", err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(b))
		dec.KnownFields(true) // a typo'd key is an error, not a silent default
		if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) {
			// An operator reads this at startup: it says both languages.
			return c, fmt.Errorf("parse config %s: %w / 配置文件无效（未知的键也是错误）", path, err)
		}
	}
	if err := applyEnv(&c, getenv); err != nil {
		return c, err
	}
	if err := applyHAEnv(&c, getenv); err != nil {
		return c, err
	}
	if err := applyHubEnv(&c, getenv); err != nil {
		return c, err
	}
	return c, nil
}

// Env variable names (HETEROFLOW_ADMIN_PASSWORD is read by the bootstrap, not stored here).
const (
	EnvAPIAddr           = "HETEROFLOW_API_ADDR"
	EnvConsoleAddr       = "HETEROFLOW_CONSOLE_ADDR"
	EnvMetricsAddr       = "HETEROFLOW_METRICS_ADDR"
	EnvExternalURL       = "HETEROFLOW_EXTERNAL_URL"
	EnvDB                = "HETEROFLOW_DB"
	EnvDataDir           = "HETEROFLOW_DATA_DIR"
	EnvCORSOrigins       = "HETEROFLOW_CORS_ORIGINS" // comma-separated
	EnvAllowRegistration = "HETEROFLOW_ALLOW_REGISTRATION"
	EnvLogLevel          = "HETEROFLOW_LOG_LEVEL"
	EnvLogFormat         = "HETEROFLOW_LOG_FORMAT"
	EnvAdminPassword     = "HETEROFLOW_ADMIN_PASSWORD"
	EnvGrafanaURL        = "HETEROFLOW_GRAFANA_URL"
	EnvLDAPURL           = "HETEROFLOW_LDAP_URL" // comma-separated
	EnvLDAPBindDN        = "HETEROFLOW_LDAP_BIND_DN"
	EnvLDAPPasswordFile  = "HETEROFLOW_LDAP_BIND_PASSWORD_FILE"
	// The LDAP service account's password itself may come from
	// HETEROFLOW_LDAP_BIND_PASSWORD (ldapauth.EnvBindPassword).
)

func applyEnv(c *Config, getenv func(string) string) error {
	set := func(name string, dst *string) {
		if v := getenv(name); v != "" {
			*dst = v
		}
	}
	set(EnvAPIAddr, &c.APIAddr)
	set(EnvConsoleAddr, &c.ConsoleAddr)
	set(EnvMetricsAddr, &c.MetricsAddr)
	set(EnvExternalURL, &c.ExternalURL)
	set(EnvDB, &c.DB)
	set(EnvDataDir, &c.DataDir)
	set(EnvLogLevel, &c.LogLevel)
	set(EnvLogFormat, &c.LogFormat)
	set(EnvGrafanaURL, &c.GrafanaURL)
	set(EnvLDAPBindDN, &c.Auth.LDAP.BindDN)
	set(EnvLDAPPasswordFile, &c.Auth.LDAP.BindPasswordFile)
	if v := getenv(EnvLDAPURL); v != "" {
		c.Auth.LDAP.URLs = splitList(v)
	}
	if v := getenv(EnvCORSOrigins); v != "" {
		c.CORSOrigins = splitList(v)
	}
	if v := getenv(EnvAllowRegistration); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("%s=%q is not a boolean", EnvAllowRegistration, v)
		}
		c.AllowRegistration = b
	}
	return nil
}

// splitList splits a comma-separated variable, dropping empty entries.
func splitList(v string) []string {
	var out []string
	for _, o := range strings.Split(v, ",") {
		if o = strings.TrimSpace(o); o != "" {
			out = append(out, o)
		}
	}
	return out
}

// Flag names of `heteroflow server`.
const (
	FlagConfig            = "config"
	FlagDB                = "db"
	FlagDataDir           = "data-dir"
	FlagAPIAddr           = "api-addr"
	FlagConsoleAddr       = "console-addr"
	FlagMetricsAddr       = "metrics-addr"
	FlagExternalURL       = "external-url"
	FlagCORSOrigin        = "cors-origin"
	FlagAllowRegistration = "allow-registration"
	FlagLogLevel          = "log-level"
	FlagPreemptMode       = "preempt-mode"
	FlagAllowDefrag       = "allow-defrag"
	FlagTLSCert           = "tls-cert"
	FlagTLSKey            = "tls-key"
	FlagTLSClientCA       = "tls-client-ca"
	FlagTLSCAKey          = "tls-ca-key"
	FlagMTLS              = "mtls"
	FlagLDAPURL           = "ldap-url"
	FlagLDAPBindDN        = "ldap-bind-dn"
	FlagLDAPPasswordFile  = "ldap-bind-password-file"
)

// RegisterFlags declares the server's flags with Defaults() as their defaults.
func RegisterFlags(fs *pflag.FlagSet) {
	d := Defaults()
	fs.String(FlagConfig, "", "YAML config file / 配置文件 (YAML)")
	fs.String(FlagDB, d.DB, "store DSN: empty = embedded SQLite in --data-dir, or postgres://user@host:5432/db / 存储 DSN")
	fs.String(FlagDataDir, d.DataDir, "data directory / 数据目录")
	fs.String(FlagAPIAddr, d.APIAddr, "REST API listen address / API 监听地址")
	fs.String(FlagConsoleAddr, d.ConsoleAddr, "web console listen address, empty disables / 控制台监听地址(空为禁用)")
	fs.String(FlagMetricsAddr, d.MetricsAddr, "separate listener for the server's own /metrics without authentication (e.g. 127.0.0.1:9464), empty disables / 单独的自身指标监听地址(无需认证)，空为禁用")
	fs.String(FlagExternalURL, d.ExternalURL, "API URL as agents reach it, used in the console's enrolment command / 代理访问 API 的外部地址")
	fs.StringArray(FlagCORSOrigin, nil, "allowed CORS origin, repeatable / 允许的跨域来源(可重复)")
	fs.Bool(FlagAllowRegistration, d.AllowRegistration, "allow self-registration (admin approval still required) / 允许自助注册(仍需管理员审批)")
	fs.String(FlagLogLevel, d.LogLevel, "log level: debug|info|warn|error / 日志级别")
	fs.String(FlagPreemptMode, d.Scheduling.PreemptMode, "preemption: off|queue-only|preempt-running (empty = profile's) / 抢占模式: 禁用|仅排队|可抢占运行中")
	fs.Bool(FlagAllowDefrag, d.Scheduling.AllowDefrag, "let the defragmenter requeue restartable Bronze tasks / 允许碎片整理重排 Bronze 任务")
	fs.String(FlagTLSCert, "", "server certificate (PEM); with --tls-key the listeners serve HTTPS / 服务器证书(PEM)，与 --tls-key 一起启用 HTTPS")
	fs.String(FlagTLSKey, "", "server private key (PEM) / 服务器私钥(PEM)")
	fs.Bool(FlagMTLS, false, "issue client certificates to agents at enrollment and accept them (needs HTTPS) / 为代理签发并接受客户端证书(需 HTTPS)")
	fs.String(FlagTLSClientCA, "", "CA certificate that signs agent certificates; empty = auto-generated in <data-dir>/pki / 签发代理证书的 CA 证书，空则自动生成")
	fs.String(FlagTLSCAKey, "", "private key of --tls-client-ca / --tls-client-ca 的私钥")
	fs.StringArray(FlagLDAPURL, nil, "LDAP directory URL (ldaps:// or ldap:// with auth.ldap.start_tls), repeatable; the rest of auth.ldap is in the config file / LDAP 目录地址(可重复)，其余设置见配置文件 auth.ldap")
	fs.String(FlagLDAPBindDN, "", "DN of the LDAP service account that searches users / 用于查询用户的 LDAP 服务账号 DN")
	fs.String(FlagLDAPPasswordFile, "", "file holding the LDAP service account's password / LDAP 服务账号密码文件")
	registerDefragFlags(fs, d.Scheduling.Defrag)
	registerHAFlags(fs)
	registerHubFlags(fs)
	registerRetentionFlags(fs, d.Retention)
}

// ApplyFlags overrides c with the flags the user actually set.
func ApplyFlags(fs *pflag.FlagSet, c *Config) error {
	var err error
	str := func(name string, dst *string) {
		if fs.Changed(name) && err == nil {
			*dst, err = fs.GetString(name)
		}
	}
	str(FlagDB, &c.DB)
	str(FlagDataDir, &c.DataDir)
	str(FlagAPIAddr, &c.APIAddr)
	str(FlagConsoleAddr, &c.ConsoleAddr)
	str(FlagMetricsAddr, &c.MetricsAddr)
	str(FlagExternalURL, &c.ExternalURL)
	str(FlagLogLevel, &c.LogLevel)
	str(FlagPreemptMode, &c.Scheduling.PreemptMode)
	str(FlagTLSCert, &c.TLS.Cert)
	str(FlagTLSKey, &c.TLS.Key)
	str(FlagTLSClientCA, &c.TLS.ClientCA)
	str(FlagTLSCAKey, &c.TLS.CAKey)
	str(FlagLDAPBindDN, &c.Auth.LDAP.BindDN)
	str(FlagLDAPPasswordFile, &c.Auth.LDAP.BindPasswordFile)
	if fs.Changed(FlagLDAPURL) && err == nil {
		c.Auth.LDAP.URLs, err = fs.GetStringArray(FlagLDAPURL)
	}
	if fs.Changed(FlagMTLS) && err == nil {
		c.TLS.MTLS, err = fs.GetBool(FlagMTLS)
	}
	if fs.Changed(FlagAllowDefrag) && err == nil {
		c.Scheduling.AllowDefrag, err = fs.GetBool(FlagAllowDefrag)
	}
	if fs.Changed(FlagCORSOrigin) && err == nil {
		c.CORSOrigins, err = fs.GetStringArray(FlagCORSOrigin)
	}
	if fs.Changed(FlagAllowRegistration) && err == nil {
		c.AllowRegistration, err = fs.GetBool(FlagAllowRegistration)
	}
	if err == nil {
		err = applyDefragFlags(fs, &c.Scheduling.Defrag)
	}
	if err == nil {
		err = applyHAFlags(fs, c)
	}
	if err == nil {
		err = applyHubFlags(fs, c)
	}
	if err == nil {
		err = applyRetentionFlags(fs, &c.Retention)
	}
	return err
}
