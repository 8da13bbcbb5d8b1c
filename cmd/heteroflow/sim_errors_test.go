package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// The simulator's errors name the flag at fault and carry their Chinese;
// the trace loaders' and the scheduler library's own texts are English.
func TestSimErrorsAreBilingual(t *testing.T) {
	t.Parallel()
	nodes := "../../scheduler/testdata/openb-sample/nodes.csv"
	pods := "../../scheduler/testdata/openb-sample/pods.csv"
	missing := filepath.Join(t.TempDir(), "missing.csv")
	for _, tc := range []struct {
		args []string
		en   string
	}{
		{[]string{"sim", "--nodes", missing, "--tasks", pods}, "--nodes"},
		{[]string{"sim", "--nodes", nodes, "--tasks", missing}, "--tasks"},
		{[]string{"sim", "--nodes", nodes, "--tasks", pods, "--seeds", "43-42"}, "--seeds"},
		{[]string{"sim", "--nodes", nodes, "--tasks", pods, "--profile", "nope"}, `profile "nope"`},
		{[]string{"sim", "--nodes", nodes, "--tasks", pods, "--mix", "bogus"}, "--mix"},
		{[]string{"sim", "hetero-gen", "--nodes", missing, "--tasks", pods, "--out-nodes", "n.json", "--out-tasks", "t.json"}, "--nodes"},
	} {
		r := cli(t, nil, "", tc.args...)
		require.Equal(t, 1, r.code, "%v: %+v", tc.args, r)
		require.Contains(t, r.stderr, tc.en, "%v", tc.args)
		require.Regexp(t, han, r.stderr, "%v: the error has its Chinese", tc.args)
	}
}
