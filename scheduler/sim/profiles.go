package sim

import (
	"bytes"
	"embed"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/heteroflow/heteroflow/scheduler/framework"
)

//go:embed profiles/*.yaml
var profileFS embed.FS

// BuiltinProfiles lists the embedded profiles: default, and the reference
// policies fgd, bestfit and random.
func BuiltinProfiles() []string {
	ents, _ := profileFS.ReadDir("profiles")
	out := make([]string, 0, len(ents))
	for _, e := range ents {
		out = append(out, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	sort.Strings(out)
	return out
}

// LoadProfile returns a built-in profile by name, or reads a YAML file.
func LoadProfile(nameOrPath string) (framework.Profile, error) {
	if nameOrPath == "" {
		nameOrPath = "default"
	}
	if b, err := profileFS.ReadFile("profiles/" + strings.ToLower(nameOrPath) + ".yaml"); err == nil {
		return framework.LoadProfile(bytes.NewReader(b))
	}
	if _, err := os.Stat(nameOrPath); err != nil {
		return framework.Profile{}, fmt.Errorf("profile %q is neither a built-in (%s) nor a readable file: %w",
			nameOrPath, strings.Join(BuiltinProfiles(), ", "), err)
	}
	return framework.LoadProfileFile(nameOrPath)
}
