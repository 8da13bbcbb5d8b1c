package server

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

func TestDefaultsValid(t *testing.T) {
	require.NoError(t, Defaults().Validate())
}

func TestConfigRoundTrip(t *testing.T) {
	c := Defaults()
	c.DB = "postgres://hf@db:5432/hf"
	c.CORSOrigins = []string{"https://a.example", "http://localhost:5173"}
	c.AllowRegistration = true
	c.Auth.AccessTTL = Duration(5 * time.Minute)
	b, err := yaml.Marshal(c)
	require.NoError(t, err)
	require.Contains(t, string(b), "access_ttl: 5m0s")
	path := filepath.Join(t.TempDir(), "hf.yaml")
	require.NoError(t, os.WriteFile(path, b, 0o600))
	got, err := Load(path, func(string) string { return "" })
	require.NoError(t, err)
	require.Equal(t, c, got)
}

func TestConfigPrecedence(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hf.yaml")
	require.NoError(t, os.WriteFile(path, []byte("api_addr: \":4000\"\ndata_dir: /from-file\nlog_level: warn\n"), 0o600))
	env := map[string]string{EnvDataDir: "/from-env", EnvCORSOrigins: "https://x.example, https://y.example", EnvAllowRegistration: "true"}
	c, err := Load(path, func(k string) string { return env[k] })
	require.NoError(t, err)
	require.Equal(t, ":4000", c.APIAddr)
	require.Equal(t, "/from-env", c.DataDir)
	require.Equal(t, []string{"https://x.example", "https://y.example"}, c.CORSOrigins)
	require.True(t, c.AllowRegistration)
	require.Equal(t, ":5173", c.ConsoleAddr, "default kept")

	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	RegisterFlags(fs)
	require.NoError(t, fs.Parse([]string{"--data-dir", "/from-flag", "--cors-origin", "https://z.example", "--allow-registration=false"}))
	require.NoError(t, ApplyFlags(fs, &c))
	require.Equal(t, "/from-flag", c.DataDir)
	require.Equal(t, []string{"https://z.example"}, c.CORSOrigins)
	require.False(t, c.AllowRegistration)
	require.Equal(t, "warn", c.LogLevel, "unset flags do not override")
}

func TestConfigValidation(t *testing.T) {
	cases := []struct {
		name string
		mod  func(*Config)
		msg  string
	}{
		{"api addr", func(c *Config) { c.APIAddr = "3333" }, "api_addr"},
		{"db scheme", func(c *Config) { c.DB = "mysql://u:secret@h/db" }, "u:***@h/db"},
		{"cors", func(c *Config) { c.CORSOrigins = []string{"example.com"} }, "cors_origins"},
		{"log level", func(c *Config) { c.LogLevel = "loud" }, "log_level"},
		{"ttl", func(c *Config) { c.Auth.AccessTTL = Duration(48 * time.Hour) }, "auth.access_ttl"},
		{"body", func(c *Config) { c.MaxBodyBytes = 10 }, "max_body_bytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := Defaults()
			tc.mod(&c)
			err := c.Validate()
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.msg)
			require.NotContains(t, err.Error(), "secret")
		})
	}
	path := filepath.Join(t.TempDir(), "bad.yaml")
	require.NoError(t, os.WriteFile(path, []byte("api_adr: \":1\"\n"), 0o600))
	_, err := Load(path, func(string) string { return "" })
	require.ErrorContains(t, err, "api_adr")
	require.NoError(t, os.WriteFile(path, []byte("auth:\n  access_ttl: soon\n"), 0o600))
	_, err = Load(path, func(string) string { return "" })
	require.ErrorContains(t, err, "not a duration")
}

// A config file that is missing or has an unknown key stops the server
// with a reason an operator reads in either language.
func TestConfigLoadErrorsAreBilingual(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, err := Load(filepath.Join(dir, "missing.yaml"), func(string) string { return "" })
	require.ErrorContains(t, err, "read config")
	require.ErrorContains(t, err, "无法读取配置文件")

	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("bogus_key: 1\n"), 0o600))
	_, err = Load(bad, func(string) string { return "" })
	require.ErrorContains(t, err, "bogus_key")
	require.ErrorContains(t, err, "配置文件无效")
}
