package server

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"
)

func TestTLSValidate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		tls     TLSConfig
		wantErr string
	}{
		{"off", TLSConfig{}, ""},
		{"https", TLSConfig{Cert: "c.pem", Key: "k.pem"}, ""},
		{"mtls auto CA", TLSConfig{Cert: "c.pem", Key: "k.pem", MTLS: true, RequireAgentCert: true}, ""},
		{"mtls own CA", TLSConfig{Cert: "c.pem", Key: "k.pem", MTLS: true, ClientCA: "ca.pem", CAKey: "ca.key"}, ""},
		{"key without cert", TLSConfig{Key: "k.pem"}, "tls.key is set but tls.cert is not"},
		{"cert without key", TLSConfig{Cert: "c.pem"}, "tls.cert is set but tls.key is not"},
		{"mtls without tls", TLSConfig{MTLS: true}, "tls.mtls needs HTTPS"},
		{"ca without key", TLSConfig{Cert: "c.pem", Key: "k.pem", MTLS: true, ClientCA: "ca.pem"}, "go together"},
		{"ca without mtls", TLSConfig{Cert: "c.pem", Key: "k.pem", ClientCA: "ca.pem", CAKey: "ca.key"}, "tls.mtls is off"},
		{"require without mtls", TLSConfig{Cert: "c.pem", Key: "k.pem", RequireAgentCert: true}, "require_agent_cert needs tls.mtls"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := Defaults()
			c.TLS = tc.tls
			err := c.Validate()
			if tc.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.wantErr)
		})
	}
}

func TestTLSFromYAMLAndFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "server.yaml")
	require.NoError(t, os.WriteFile(p, []byte("tls:\n  cert: a.crt\n  key: a.key\n  mtls: true\n  require_agent_cert: true\n"), 0o600))
	c, err := Load(p, func(string) string { return "" })
	require.NoError(t, err)
	require.Equal(t, TLSConfig{Cert: "a.crt", Key: "a.key", MTLS: true, RequireAgentCert: true}, c.TLS)

	fs := pflag.NewFlagSet("server", pflag.ContinueOnError)
	RegisterFlags(fs)
	require.NoError(t, fs.Parse([]string{"--tls-cert", "b.crt", "--tls-key", "b.key", "--tls-client-ca", "ca.crt", "--tls-ca-key", "ca.key", "--mtls=false"}))
	require.NoError(t, ApplyFlags(fs, &c))
	require.Equal(t, TLSConfig{Cert: "b.crt", Key: "b.key", ClientCA: "ca.crt", CAKey: "ca.key", RequireAgentCert: true}, c.TLS)
	require.ErrorContains(t, c.Validate(), "require_agent_cert needs tls.mtls")
}

func TestNewRefusesUnreadableCertificate(t *testing.T) {
	t.Parallel()
	c := Defaults()
	c.DataDir = t.TempDir()
	c.TLS = TLSConfig{Cert: filepath.Join(c.DataDir, "missing.crt"), Key: filepath.Join(c.DataDir, "missing.key"), MTLS: true}
	_, err := c.tlsConfig(nil)
	require.ErrorContains(t, err, "missing.crt")
	ca, err := c.loadCA()
	require.NoError(t, err)
	require.FileExists(t, filepath.Join(c.DataDir, "pki", "ca.crt"))
	again, err := c.loadCA()
	require.NoError(t, err)
	require.True(t, ca.Cert.Equal(again.Cert))
}
