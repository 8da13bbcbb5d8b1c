package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"
)

// TestHelpNamesOnlyCommandsThatExist: every `heteroflow …` command line a
// command's help text (short, long, example) shows is a real command, so
// the help never advertises one that is not built.
func TestHelpNamesOnlyCommandsThatExist(t *testing.T) {
	mention := regexp.MustCompile(`heteroflow ((?:[a-z][a-z-]*)(?: [a-z][a-z-]*)?)`)
	var walk func(c *cobra.Command)
	checked := 0
	walk = func(c *cobra.Command) {
		for _, m := range mention.FindAllStringSubmatch(c.Short+"\n"+c.Long+"\n"+c.Example, -1) {
			words := strings.Fields(m[1])
			found, rest, err := rootCmd.Find(words)
			require.NoError(t, err, "%s's help names %q", c.CommandPath(), m[0])
			require.NotEqual(t, rootCmd, found, "%s's help names %q", c.CommandPath(), m[0])
			if len(rest) > 0 {
				require.False(t, found.HasSubCommands(), "%s's help names %q: %q is not a subcommand of %s",
					c.CommandPath(), m[0], rest[0], found.CommandPath())
			}
			checked++
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(rootCmd)
	require.Positive(t, checked, "the help shows command lines to check")
}
