package sim

import (
	"bytes"
	"embed"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/heteroflow/heteroflow/scheduler/framework"
	"github.com/heteroflow/heteroflow/scheduler/model"
	"github.com/heteroflow/heteroflow/scheduler/plugins"
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

// LoadProfile returns a built-in profile by name, or reads a YAML file. The
// plugins are built once on an empty cluster, so bad plugin arguments are
// reported here, before any trace is read.
func LoadProfile(nameOrPath string) (framework.Profile, error) {
	if nameOrPath == "" {
		nameOrPath = "default"
	}
	var prof framework.Profile
	var err error
	if b, rerr := profileFS.ReadFile("profiles/" + strings.ToLower(nameOrPath) + ".yaml"); rerr == nil {
		prof, err = framework.LoadProfile(bytes.NewReader(b))
	} else if _, serr := os.Stat(nameOrPath); serr != nil {
		return framework.Profile{}, fmt.Errorf("profile %q is neither a built-in (%s) nor a readable file: %w",
			nameOrPath, strings.Join(BuiltinProfiles(), ", "), serr)
	} else {
		prof, err = framework.LoadProfileFile(nameOrPath)
	}
	if err != nil {
		return framework.Profile{}, err
	}
	cl, err := model.NewCluster(1)
	if err != nil {
		return framework.Profile{}, err
	}
	if _, err := framework.New(plugins.Registry(), prof, cl, framework.Options{}); err != nil {
		return framework.Profile{}, err
	}
	return prof, nil
}
