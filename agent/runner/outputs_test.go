package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReadOutputs(t *testing.T) {
	dir := t.TempDir()
	got, err := ReadOutputs(dir)
	require.NoError(t, err)
	require.Nil(t, got, "no file, no outputs")

	write := func(s string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, OutputsFile), []byte(s), 0o600))
	}
	write("# metrics\naccuracy=0.93\r\n\nmodel = /shared/m.pt\naccuracy=0.95\nempty=\n")
	got, err = ReadOutputs(dir)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"accuracy": "0.95", "model": " /shared/m.pt", "empty": ""}, got)

	for name, body := range map[string]string{
		"no equals":  "just text\n",
		"long value": "k=" + strings.Repeat("x", 5000) + "\n",
		"too many":   strings.Repeat("k=v\n", 1) + manyKeys(70),
		"too big":    strings.Repeat("#", 70<<10),
	} {
		write(body)
		_, err := ReadOutputs(dir)
		require.Error(t, err, name)
	}
}

func manyKeys(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString("k")
		b.WriteString(strings.Repeat("x", i+1))
		b.WriteString("=1\n")
	}
	return b.String()
}
