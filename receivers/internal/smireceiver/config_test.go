package smireceiver

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		mut     func(*Config)
		wantErr string
	}{
		{name: "default", mut: func(*Config) {}},
		{name: "timeout over interval", mut: func(c *Config) { c.Timeout = 2 * c.CollectionInterval }, wantErr: "overlap"},
		{name: "relative tool path", mut: func(c *Config) { c.ToolPath = "bin/smi" }, wantErr: "absolute"},
		{name: "bad env name", mut: func(c *Config) { c.Env = map[string]string{"A=B": "x"} }, wantErr: "env"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := createDefaultConfig()
			tt.mut(c)
			err := c.Validate()
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.wantErr)
		})
	}
}
