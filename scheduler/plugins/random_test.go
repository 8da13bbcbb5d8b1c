package plugins

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRandomIsVolatile: Random's scores change per call, so the framework
// must not memoise them.
func TestRandomIsVolatile(t *testing.T) {
	t.Parallel()
	require.True(t, Random{}.Volatile())
}
