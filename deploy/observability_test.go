package deploy_test

import (
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/heteroflow/heteroflow/controlplane/server"
	"github.com/heteroflow/heteroflow/dashboards"
)

// No Docker engine here: the compose "observability" profile and the
// Grafana provisioning are checked statically.

type composeFile struct {
	Services map[string]composeService `yaml:"services"`
	Volumes  map[string]any            `yaml:"volumes"`
}

type composeService struct {
	Image       string            `yaml:"image"`
	Build       any               `yaml:"build"`
	Profiles    []string          `yaml:"profiles"`
	Command     []string          `yaml:"command"`
	Environment map[string]string `yaml:"environment"`
	Ports       []string          `yaml:"ports"`
	Volumes     []string          `yaml:"volumes"`
	DependsOn   map[string]any    `yaml:"depends_on"`
}

func loadCompose(t *testing.T) composeFile {
	t.Helper()
	b, err := os.ReadFile("docker-compose.yml")
	require.NoError(t, err)
	var c composeFile
	require.NoError(t, yaml.Unmarshal(b, &c))
	return c
}

// envDefault resolves compose's ${VAR:-default} to its default.
var envDefault = regexp.MustCompile(`\$\{\w+:-([^}]*)\}`)

// TestComposeObservabilityProfile: the profile has VictoriaMetrics,
// Grafana and Alertmanager beside the server and PostgreSQL; every image is
// pinned to a version; bind-mounted files exist; published ports are the
// ones the services listen on.
func TestComposeObservabilityProfile(t *testing.T) {
	c := loadCompose(t)
	for _, name := range []string{"victoriametrics", "grafana", "alertmanager"} {
		s, ok := c.Services[name]
		require.True(t, ok, "service %s missing", name)
		require.Equal(t, []string{"observability"}, s.Profiles, "%s belongs to the observability profile", name)
	}
	for _, name := range []string{"server", "postgres", "agent"} {
		require.Empty(t, c.Services[name].Profiles, "%s runs in every profile", name)
	}

	pinned := regexp.MustCompile(`^[\w./-]+:v?\d+\.\d+(\.\d+)?(-[\w.]+)?(@sha256:[0-9a-f]{64})?$`)
	for name, s := range c.Services {
		if s.Build != nil {
			continue // built from this repository
		}
		require.Regexp(t, pinned, s.Image, "%s: image must be pinned to a version", name)
	}

	for name, s := range c.Services {
		for _, v := range s.Volumes {
			src, _, ok := strings.Cut(envDefault.ReplaceAllString(v, "$1"), ":")
			require.True(t, ok, "%s: volume %q", name, v)
			if !strings.HasPrefix(src, ".") {
				require.Contains(t, c.Volumes, src, "%s: named volume %s not declared", name, src)
				continue
			}
			_, err := os.Stat(src)
			require.NoError(t, err, "%s mounts %s", name, src)
		}
		for dep := range s.DependsOn {
			require.Contains(t, c.Services, dep, "%s depends on unknown %s", name, dep)
		}
	}

	// Published container ports are the ports the services listen on.
	listens := map[string][]string{
		"server":          {flagPort(t, c.Services["server"].Command, "--api-addr"), flagPort(t, c.Services["server"].Command, "--console-addr")},
		"victoriametrics": {argPort(t, c.Services["victoriametrics"].Command, "-httpListenAddr=")},
		"grafana":         {"3000"}, // Grafana's default http_port
		"alertmanager":    {"9093"}, // Alertmanager's default --web.listen-address
	}
	for name, want := range listens {
		var got []string
		for _, p := range c.Services[name].Ports {
			_, container, ok := strings.Cut(p, ":")
			require.True(t, ok, "%s: port %q", name, p)
			got = append(got, container)
		}
		require.ElementsMatch(t, want, got, "%s publishes other ports than it listens on", name)
	}
}

// TestComposeServerConfigs: both server configs the compose file can mount
// load and validate, and the remote one points at the VictoriaMetrics
// service on the port it listens on.
func TestComposeServerConfigs(t *testing.T) {
	c := loadCompose(t)
	vmPort := argPort(t, c.Services["victoriametrics"].Command, "-httpListenAddr=")
	noEnv := func(string) string { return "" }
	for _, f := range []string{"compose/server-embedded.yaml", "compose/server-victoriametrics.yaml"} {
		cfg, err := server.Load(f, noEnv)
		require.NoError(t, err, f)
		cfg.DataDir = t.TempDir()
		require.NoError(t, cfg.Validate(), f)
	}
	cfg, err := server.Load("compose/server-victoriametrics.yaml", noEnv)
	require.NoError(t, err)
	require.Equal(t, "remote", cfg.Metrics.Mode)
	for _, raw := range []string{cfg.Metrics.Remote.QueryURL, cfg.Metrics.Remote.WriteURL} {
		u, err := url.Parse(raw)
		require.NoError(t, err)
		require.Equal(t, "victoriametrics", u.Hostname(), raw)
		require.Equal(t, vmPort, u.Port(), raw)
	}
	// The default compose run mounts the embedded config.
	require.Contains(t, c.Services["server"].Volumes, "${HETEROFLOW_SERVER_CONFIG:-./compose/server-embedded.yaml}:/etc/heteroflow/server.yaml:ro")
	require.True(t, slices.Contains(c.Services["server"].Command, "/etc/heteroflow/server.yaml"))
}

// TestGrafanaProvisioning: the datasource reaches the server's /prometheus
// with the API key header, and the dashboards provider reads the folder the
// generated dashboards are mounted at.
func TestGrafanaProvisioning(t *testing.T) {
	c := loadCompose(t)
	g := c.Services["grafana"]

	var ds struct {
		APIVersion  int `yaml:"apiVersion"`
		Datasources []struct {
			Name, UID, Type, Access, URL string
			IsDefault                    bool           `yaml:"isDefault"`
			JSONData                     map[string]any `yaml:"jsonData"`
			SecureJSONData               map[string]any `yaml:"secureJsonData"`
		} `yaml:"datasources"`
	}
	readYAML(t, "grafana/provisioning/datasources/heteroflow.yml", &ds)
	require.Equal(t, 1, ds.APIVersion)
	require.Len(t, ds.Datasources, 1)
	d := ds.Datasources[0]
	require.Equal(t, "prometheus", d.Type)
	require.True(t, d.IsDefault)
	// ${HETEROFLOW_URL} comes from Grafana's environment in compose.
	resolved := strings.ReplaceAll(d.URL, "${HETEROFLOW_URL}", g.Environment["HETEROFLOW_URL"])
	u, err := url.Parse(resolved)
	require.NoError(t, err)
	require.Equal(t, "/prometheus", u.Path)
	require.Contains(t, c.Services, u.Hostname(), "datasource host is not a compose service")
	require.Equal(t, flagPort(t, c.Services["server"].Command, "--api-addr"), u.Port())
	require.Equal(t, "Authorization", d.JSONData["httpHeaderName1"])
	require.Equal(t, "Bearer ${HETEROFLOW_GRAFANA_API_KEY}", d.SecureJSONData["httpHeaderValue1"])
	require.Contains(t, g.Environment, "HETEROFLOW_GRAFANA_API_KEY")

	var prov struct {
		Providers []struct {
			Name, Type string
			Options    struct{ Path string } `yaml:"options"`
		} `yaml:"providers"`
	}
	readYAML(t, "grafana/provisioning/dashboards/heteroflow.yml", &prov)
	require.Len(t, prov.Providers, 1)
	require.Equal(t, "file", prov.Providers[0].Type)
	mounts := map[string]string{} // container path → host path
	for _, v := range g.Volumes {
		parts := strings.Split(v, ":")
		mounts[parts[1]] = parts[0]
	}
	host, ok := mounts[prov.Providers[0].Options.Path]
	require.True(t, ok, "provider path %s is not mounted into grafana", prov.Providers[0].Options.Path)
	for _, b := range dashboards.All() {
		_, err := os.Stat(filepath.Join(host, b.File))
		require.NoError(t, err, "dashboard %s not in the mounted folder", b.File)
	}
	require.Equal(t, "./grafana/provisioning", mounts["/etc/grafana/provisioning"])
	home := g.Environment["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"]
	_, err = os.Stat(filepath.Join(host, strings.TrimPrefix(home, prov.Providers[0].Options.Path)))
	require.NoError(t, err, "home dashboard %s", home)
}

// TestAlertmanagerConfig: amtool (Debian's prometheus-alertmanager) accepts
// the compose Alertmanager config.
func TestAlertmanagerConfig(t *testing.T) {
	amtool, err := exec.LookPath("amtool")
	if err != nil {
		t.Skip("amtool not installed (make deps installs Debian's prometheus-alertmanager)")
	}
	out, err := exec.Command(amtool, "check-config", "compose/alertmanager.yml").CombinedOutput()
	require.NoError(t, err, "%s", out)
}

func readYAML(t *testing.T, path string, out any) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(b, out), path)
}

// flagPort is the port of "--flag", ":port" in an argument list.
func flagPort(t *testing.T, args []string, flag string) string {
	t.Helper()
	i := slices.Index(args, flag)
	require.True(t, i >= 0 && i+1 < len(args), "%s not in %v", flag, args)
	_, port, ok := strings.Cut(args[i+1], ":")
	require.True(t, ok)
	return port
}

// argPort is the port of "-flag=:port" in an argument list.
func argPort(t *testing.T, args []string, prefix string) string {
	t.Helper()
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, prefix); ok {
			_, port, _ := strings.Cut(v, ":")
			return port
		}
	}
	t.Fatalf("%s not in %v", prefix, args)
	return ""
}
