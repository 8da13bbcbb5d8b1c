package hostresource

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/processor/processortest"
)

func TestProcessorStampsResource(t *testing.T) {
	t.Parallel()
	idFile := filepath.Join(t.TempDir(), "machine-id")
	require.NoError(t, os.WriteFile(idFile, []byte("abc123\n"), 0o644))

	tests := []struct {
		name     string
		cfg      Config
		preset   map[string]string
		wantName string
	}{
		{name: "fills missing", cfg: Config{HostName: "node-1", MachineIDPath: idFile}, wantName: "node-1"},
		{name: "keeps upstream value", cfg: Config{HostName: "node-1", MachineIDPath: idFile},
			preset: map[string]string{"host.name": "agent-set"}, wantName: "agent-set"},
		{name: "override replaces", cfg: Config{HostName: "node-1", MachineIDPath: idFile, Override: true},
			preset: map[string]string{"host.name": "agent-set"}, wantName: "node-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sink := new(consumertest.MetricsSink)
			cfg := tt.cfg
			p, err := NewFactory().CreateMetrics(context.Background(),
				processortest.NewNopSettings(Type), &cfg, sink)
			require.NoError(t, err)
			require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
			defer func() { require.NoError(t, p.Shutdown(context.Background())) }()

			md := pmetric.NewMetrics()
			res := md.ResourceMetrics().AppendEmpty().Resource().Attributes()
			for k, v := range tt.preset {
				res.PutStr(k, v)
			}
			require.NoError(t, p.ConsumeMetrics(context.Background(), md))
			got := sink.AllMetrics()[0].ResourceMetrics().At(0).Resource().Attributes().AsRaw()
			require.Equal(t, tt.wantName, got["host.name"])
			require.Equal(t, "abc123", got["host.id"])
			require.NotEmpty(t, got["os.type"])
			require.NotEmpty(t, got["host.arch"])
		})
	}
}

func TestDetectWithoutMachineID(t *testing.T) {
	t.Parallel()
	attrs, err := Detect(&Config{HostName: "n", MachineIDPath: filepath.Join(t.TempDir(), "absent")})
	require.NoError(t, err)
	for _, kv := range attrs {
		require.NotEqual(t, "host.id", kv[0], "absent machine id must leave host.id out")
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	require.NoError(t, (&Config{HostName: "ok"}).Validate())
	require.Error(t, (&Config{HostName: "two words"}).Validate())
}
