package hwmetrics

import (
	"os"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// yamlMetadata is the part of mdatagen's metadata.yaml schema we use.
type yamlMetadata struct {
	Type       string `yaml:"type"`
	Attributes map[string]struct {
		Description string   `yaml:"description"`
		Type        string   `yaml:"type"`
		Enum        []string `yaml:"enum"`
	} `yaml:"attributes"`
	Metrics map[string]struct {
		Enabled     bool   `yaml:"enabled"`
		Description string `yaml:"description"`
		Unit        string `yaml:"unit"`
		Gauge       *struct {
			ValueType string `yaml:"value_type"`
		} `yaml:"gauge"`
		Sum *struct {
			ValueType   string `yaml:"value_type"`
			Monotonic   bool   `yaml:"monotonic"`
			Temporality string `yaml:"aggregation_temporality"`
		} `yaml:"sum"`
		Attributes []string `yaml:"attributes"`
	} `yaml:"metrics"`
}

// TestMetadataMatchesBuilder stands in for mdatagen: the hand-written
// builder must say exactly what metadata.yaml says.
func TestMetadataMatchesBuilder(t *testing.T) {
	raw, err := os.ReadFile("metadata.yaml")
	require.NoError(t, err)
	var md yamlMetadata
	require.NoError(t, yaml.Unmarshal(raw, &md))
	require.Equal(t, "hwmetrics", md.Type)
	require.Len(t, md.Metrics, int(numMetrics), "metadata.yaml and defs.go list different metrics")

	defaults := DefaultMetricsBuilderConfig().Metrics.enabled()
	cfgType := reflect.TypeFor[MetricsConfig]()
	for id := range numMetrics {
		d := defs[id]
		t.Run(d.name, func(t *testing.T) {
			m, ok := md.Metrics[d.name]
			require.True(t, ok, "metric missing from metadata.yaml")
			require.Equal(t, m.Description, d.description)
			require.Equal(t, m.Unit, d.unit)
			require.Equal(t, m.Attributes, d.attrs)
			require.Equal(t, m.Enabled, defaults[id])
			switch d.kind {
			case gaugeDouble:
				require.NotNil(t, m.Gauge)
				require.Equal(t, "double", m.Gauge.ValueType)
			case upDownInt, counterInt:
				require.NotNil(t, m.Sum)
				require.Equal(t, "int", m.Sum.ValueType)
				require.Equal(t, d.kind == counterInt, m.Sum.Monotonic)
				require.Equal(t, "cumulative", m.Sum.Temporality)
			}
			for _, a := range d.attrs {
				require.Contains(t, md.Attributes, a)
			}
			// The config switch for this metric carries the metric's name.
			require.Equal(t, d.name, cfgType.Field(int(id)).Tag.Get("mapstructure"))
		})
	}
}
