package collector

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// AgentConfig is what the node agent knows when it starts its embedded
// collector: the vendors it found, where the server is and its API key.
type AgentConfig struct {
	Vendors   []string // inventory vendor names; each gets its receiver
	ServerURL string   // e.g. https://heteroflow.example:3333
	APIKey    string   // hf_… agent key, sent as Authorization: Bearer
	// RemoteWritePath is appended to ServerURL (default /api/v1/write, the
	// Prometheus remote-write path).
	RemoteWritePath string
	Interval        time.Duration // default 10 s
	HostMetrics     bool          // add host_metrics (cpu, memory, disk, network, filesystem)
	NodeName        string        // host.name on every series; empty: os.Hostname
	// ToolPaths overrides a vendor's CLI path (vendor → absolute path).
	ToolPaths map[string]string
	// TLS is the exporter's trust and client certificate for an https
	// server (the agent's --ca-file and its mTLS certificate); empty
	// fields keep the system roots and send no certificate.
	TLS ExporterTLS
}

// ExporterTLS are PEM file paths for the remote-write exporter.
type ExporterTLS struct {
	CAFile, CertFile, KeyFile string
}

// DefaultRemoteWritePath is Prometheus' remote-write receiver path.
const DefaultRemoteWritePath = "/api/v1/write"

// Validate checks the config before any YAML is produced.
func (c *AgentConfig) Validate() error {
	var errs []error
	if len(c.Vendors) == 0 && !c.HostMetrics {
		errs = append(errs, errors.New("nothing to collect: no vendors and host metrics off"))
	}
	for _, v := range c.Vendors {
		if _, err := ReceiverType(v); err != nil {
			errs = append(errs, err)
		}
	}
	u, err := url.Parse(c.ServerURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("server URL %q must be http(s)://host[:port]", c.ServerURL))
	}
	if c.Interval < 0 {
		errs = append(errs, fmt.Errorf("interval %s is negative", c.Interval))
	}
	if strings.ContainsAny(c.NodeName, " \t\n") {
		errs = append(errs, fmt.Errorf("node name %q contains whitespace", c.NodeName))
	}
	return errors.Join(errs...)
}

// YAML renders the collector config: the vendors' receivers (and
// host_metrics) → memory_limiter → host_resource → batch →
// prometheus_remote_write to the server.
func (c *AgentConfig) YAML() ([]byte, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("agent collector config: %w", err)
	}
	interval := c.Interval
	if interval == 0 {
		interval = 10 * time.Second
	}
	path := c.RemoteWritePath
	if path == "" {
		path = DefaultRemoteWritePath
	}
	receivers := map[string]any{}
	var names []string
	for _, v := range c.Vendors {
		typ, _ := ReceiverType(v) // validated above
		// A CLI that hangs longer than an interval is cut off before the
		// next scrape is due.
		rc := map[string]any{"collection_interval": interval.String(), "timeout": min(interval, 5*time.Second).String()}
		if p := c.ToolPaths[v]; p != "" {
			rc["tool_path"] = p
		}
		receivers[typ.String()] = rc
		names = append(names, typ.String())
	}
	if c.HostMetrics {
		receivers["host_metrics"] = hostMetricsConfig(interval)
		names = append(names, "host_metrics")
	}
	rw := map[string]any{
		"endpoint": strings.TrimRight(c.ServerURL, "/") + path,
		// Resource attributes (host.name, …) become labels, so PromQL can
		// group GPU series by node without joining target_info.
		"resource_to_telemetry_conversion": map[string]any{"enabled": true},
	}
	if c.APIKey != "" {
		rw["headers"] = map[string]any{"Authorization": "Bearer " + c.APIKey}
	}
	if t := c.TLS; t != (ExporterTLS{}) {
		tc := map[string]any{}
		for k, v := range map[string]string{"ca_file": t.CAFile, "cert_file": t.CertFile, "key_file": t.KeyFile} {
			if v != "" {
				tc[k] = v
			}
		}
		if t.CertFile != "" {
			// The agent renews its certificate in place before it expires;
			// the exporter re-reads the files so it follows.
			tc["reload_interval"] = "1m"
		}
		rw["tls"] = tc
	}
	hr := map[string]any{}
	if c.NodeName != "" {
		hr["host_name"] = c.NodeName
	}
	doc := map[string]any{
		"receivers": receivers,
		"processors": map[string]any{
			"memory_limiter": memoryLimiterConfig(),
			"host_resource":  hr,
			"batch":          map[string]any{"timeout": "1s"},
		},
		"exporters": map[string]any{"prometheus_remote_write": rw},
		"service": map[string]any{
			// The agent has its own /metrics; the collector's :8888 would
			// only collide with it.
			"telemetry": map[string]any{"metrics": map[string]any{"level": "none"}},
			"pipelines": map[string]any{"metrics": map[string]any{
				"receivers":  names,
				"processors": []string{"memory_limiter", "host_resource", "batch"},
				"exporters":  []string{"prometheus_remote_write"},
			}},
		},
	}
	out, err := yaml.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("agent collector config: %w", err)
	}
	return out, nil
}

func hostMetricsConfig(interval time.Duration) map[string]any {
	return map[string]any{
		"collection_interval": interval.String(),
		"scrapers": map[string]any{
			"cpu": map[string]any{}, "memory": map[string]any{}, "disk": map[string]any{},
			"network": map[string]any{}, "filesystem": map[string]any{},
		},
	}
}

// memoryLimiterConfig caps the collector well above its ~30–60 MB working
// set so that only a stuck exporter queue trips it.
func memoryLimiterConfig() map[string]any {
	return map[string]any{"check_interval": "1s", "limit_mib": 192, "spike_limit_mib": 48}
}
