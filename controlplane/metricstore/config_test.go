package metricstore_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/heteroflow/heteroflow/controlplane/metricstore"
)

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	remote := func(c *metricstore.Config) {
		c.Mode = metricstore.ModeRemote
		c.Remote.QueryURL = "http://vm:8428"
		c.Remote.WriteURL = "http://vm:8428/api/v1/write"
	}
	cases := []struct {
		name   string
		mutate func(*metricstore.Config)
		ok     bool
	}{
		{"defaults", func(*metricstore.Config) {}, true},
		{"remote", remote, true},
		{"unknown mode", func(c *metricstore.Config) { c.Mode = "cloud" }, false},
		{"no dir", func(c *metricstore.Config) { c.Dir = "" }, false},
		{"tiny retention", func(c *metricstore.Config) { c.Retention = time.Minute }, false},
		{"size-only retention", func(c *metricstore.Config) { c.Retention = 0; c.RetentionSize = 1 << 30 }, true},
		{"negative ooo", func(c *metricstore.Config) { c.OutOfOrderWindow = -time.Second }, false},
		{"zero query timeout", func(c *metricstore.Config) { c.Query.Timeout = 0 }, false},
		{"zero max samples", func(c *metricstore.Config) { c.Query.MaxSamples = 0 }, false},
		{"zero concurrency", func(c *metricstore.Config) { c.Query.MaxConcurrent = 0 }, false},
		{"sub-second self ingest", func(c *metricstore.Config) { c.SelfIngestInterval = time.Millisecond }, false},
		{"self ingest off", func(c *metricstore.Config) { c.SelfIngestInterval = 0 }, true},
		{"byte budget below body", func(c *metricstore.Config) { c.Ingest.MaxInflightBytes = c.Ingest.MaxBodyBytes - 1 }, false},
		{"remote without write url", func(c *metricstore.Config) { remote(c); c.Remote.WriteURL = "" }, false},
		{"remote basic and bearer", func(c *metricstore.Config) { remote(c); c.Remote.Username = "u"; c.Remote.BearerToken = "t" }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := metricstore.Defaults()
			tc.mutate(&c)
			if tc.ok {
				require.NoError(t, c.Validate())
			} else {
				require.Error(t, c.Validate())
			}
		})
	}
}

func TestConfigYAMLRoundTrip(t *testing.T) {
	t.Parallel()
	in := metricstore.Defaults()
	in.RetentionSize = 10 << 30
	in.PromoteResourceAttributes = []string{"host.name"}
	out, err := yaml.Marshal(in)
	require.NoError(t, err)
	var back metricstore.Config
	require.NoError(t, yaml.Unmarshal(out, &back))
	require.Equal(t, in, back)

	// Durations are Go duration strings (hours, not days).
	var c metricstore.Config
	require.NoError(t, yaml.Unmarshal([]byte("retention: 720h\nquery: {timeout: 30s}\n"), &c))
	require.Equal(t, 30*24*time.Hour, c.Retention)
	require.Equal(t, 30*time.Second, c.Query.Timeout)
}
