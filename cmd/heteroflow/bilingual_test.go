package main

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

var han = regexp.MustCompile(`\p{Han}`)

// Cobra's and pflag's own parsing errors are English; the CLI prints each
// with its Chinese and exits 1.
func TestParsingErrorsAreBilingual(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"tsk"},                                 // unknown command at the root
		{"task", "list", "--bogus"},             // unknown flag
		{"task", "get", "1", "2"},               // too many arguments
		{"task", "cancel"},                      // too few arguments
		{"task", "submit", "--devices", "abc"},  // flag value of the wrong type
		{"version", "extra"},                    // a command that takes none
		{"alert", "rule-create", "--name", "x"}, // required flag missing
		{"help", "tsk"},                         // help on a command that does not exist
	} {
		r := cli(t, nil, "", args...)
		require.Equal(t, 1, r.code, "%v: %+v", args, r)
		require.Regexp(t, han, r.stderr, "%v: the error has its Chinese", args)
		require.Contains(t, r.stderr, "--help", "%v: points to the help", args)
	}
}

// The help's headings and its --help flag are bilingual on every level.
func TestHelpHeadingsAreBilingual(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--help"}, {"task", "--help"}, {"task", "submit", "--help"}, {"help", "task"}} {
		r := cli(t, nil, "", args...)
		require.Equal(t, 0, r.code, "%v: %+v", args, r)
		require.Contains(t, r.stdout, "Usage / 用法:", "%v", args)
		require.Contains(t, r.stdout, "Flags / 选项:", "%v", args)
		require.Regexp(t, `help for \S+ / 显示帮助`, r.stdout, "%v", args)
		require.NotRegexp(t, `(?m)^(Usage|Flags|Global Flags|Available Commands):`, r.stdout, "%v", args)
	}
	r := cli(t, nil, "", "--help")
	require.Regexp(t, `(?m)^  completion .*/ .*\p{Han}`, r.stdout)
	require.Regexp(t, `(?m)^  help .*/ .*\p{Han}`, r.stdout)
}
