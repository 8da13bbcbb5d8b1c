package collector

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.yaml.in/yaml/v3"
)

func TestComponents(t *testing.T) {
	t.Parallel()
	f, err := Components()
	require.NoError(t, err)
	for _, r := range []string{"nvidia_smi", "rocm_smi", "hy_smi", "npu_smi", "cnmon", "xpu_smi",
		"mthreads_gmi", "brsmi", "ixsmi", "mx_smi", "efsmi", "host_metrics"} {
		require.Contains(t, f.Receivers, component.MustNewType(r))
	}
	for _, p := range []string{"batch", "memory_limiter", "host_resource"} {
		require.Contains(t, f.Processors, component.MustNewType(p))
	}
	for _, e := range []string{"otlp_http", "prometheus_remote_write", "prometheus", "debug"} {
		require.Contains(t, f.Exporters, component.MustNewType(e))
	}
	require.NotNil(t, f.Telemetry)
}

// The shipped default config must load and validate as users run it.
func TestDefaultConfigValidates(t *testing.T) {
	uri, err := FileURI("../deploy/collector.yaml")
	require.NoError(t, err)
	require.NoError(t, Validate(context.Background(), Settings{ConfigURIs: []string{uri}}))
}

func TestBadConfigIsRefused(t *testing.T) {
	bad := YAMLURI([]byte(`receivers: {nvidia_smi: {tool_path: relative/nvidia-smi}}
exporters: {debug: {}}
service: {telemetry: {metrics: {level: none}}, pipelines: {metrics: {receivers: [nvidia_smi], exporters: [debug]}}}`))
	err := Validate(context.Background(), Settings{ConfigURIs: []string{bad}})
	require.ErrorContains(t, err, "absolute")
}

func TestAgentConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cfg     AgentConfig
		wantErr string
	}{
		{name: "ok", cfg: AgentConfig{Vendors: []string{"nvidia", "ascend"}, ServerURL: "https://hf:3333", APIKey: "hf_a_b"}},
		{name: "host only", cfg: AgentConfig{ServerURL: "http://hf", HostMetrics: true}},
		{name: "nothing", cfg: AgentConfig{ServerURL: "http://hf"}, wantErr: "nothing to collect"},
		{name: "unknown vendor", cfg: AgentConfig{Vendors: []string{"intel"}, ServerURL: "http://hf"}, wantErr: `unknown vendor "intel"`},
		{name: "bad url", cfg: AgentConfig{Vendors: []string{"nvidia"}, ServerURL: "hf:3333"}, wantErr: "server URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			doc, err := tt.cfg.YAML()
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			var m map[string]any
			require.NoError(t, yaml.Unmarshal(doc, &m))
			require.NoError(t, Validate(context.Background(), Settings{ConfigURIs: []string{YAMLURI(doc)}}))
		})
	}
}

func TestAgentConfigContents(t *testing.T) {
	t.Parallel()
	doc, err := (&AgentConfig{Vendors: []string{"cambricon"}, ServerURL: "https://hf:3333/", APIKey: "hf_x_y"}).YAML()
	require.NoError(t, err)
	var m struct {
		Receivers map[string]map[string]any `yaml:"receivers"`
		Exporters struct {
			RW struct {
				Endpoint string            `yaml:"endpoint"`
				Headers  map[string]string `yaml:"headers"`
			} `yaml:"prometheus_remote_write"`
		} `yaml:"exporters"`
	}
	require.NoError(t, yaml.Unmarshal(doc, &m))
	require.Contains(t, m.Receivers, "cnmon")
	require.Equal(t, "10s", m.Receivers["cnmon"]["collection_interval"])
	require.Equal(t, "https://hf:3333/api/v1/write", m.Exporters.RW.Endpoint)
	require.Equal(t, "Bearer hf_x_y", m.Exporters.RW.Headers["Authorization"])
}
