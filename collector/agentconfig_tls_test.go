package collector

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// TestAgentConfigTLS: the agent's CA file and mTLS client certificate
// reach the remote-write exporter's tls block, in a config the collector accepts.
func TestAgentConfigTLS(t *testing.T) {
	t.Parallel()
	cfg := AgentConfig{ServerURL: "https://hf:3333", HostMetrics: true, APIKey: "hf_a_b",
		TLS: ExporterTLS{CAFile: "/etc/hf/ca.pem", CertFile: "/var/lib/hf/client.crt", KeyFile: "/var/lib/hf/client.key"}}
	doc, err := cfg.YAML()
	require.NoError(t, err)
	var m struct {
		Exporters struct {
			RW struct {
				TLS map[string]string `yaml:"tls"`
			} `yaml:"prometheus_remote_write"`
		} `yaml:"exporters"`
	}
	require.NoError(t, yaml.Unmarshal(doc, &m))
	require.Equal(t, map[string]string{"ca_file": "/etc/hf/ca.pem", "cert_file": "/var/lib/hf/client.crt", "key_file": "/var/lib/hf/client.key",
		"reload_interval": "1m"},
		m.Exporters.RW.TLS)
	require.NoError(t, Validate(context.Background(), Settings{ConfigURIs: []string{YAMLURI(doc)}}))

	plain, err := (&AgentConfig{ServerURL: "http://hf", HostMetrics: true}).YAML()
	require.NoError(t, err)
	require.NotContains(t, string(plain), "tls:")
}
