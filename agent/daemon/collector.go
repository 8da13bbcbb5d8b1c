package daemon

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/heteroflow/heteroflow/agent/credentials"
	"github.com/heteroflow/heteroflow/collector"
)

// runCollector runs the embedded collector with the receivers of every
// vendor found plus host metrics, remote-writing to the server with the
// node's key. A failure is logged and retried: metrics must not take the
// task runner down.
func (a *Agent) runCollector(ctx context.Context) {
	cfg := collector.AgentConfig{Vendors: vendorsOf(a.inv), ServerURL: a.cl.baseURL(), APIKey: a.creds.APIKey,
		HostMetrics: true, NodeName: a.creds.NodeID, TLS: a.exporterTLS(ctx)}
	doc, err := cfg.YAML()
	if err != nil {
		a.cfg.Logger.Error("collector config", "err", err)
		return
	}
	for ctx.Err() == nil {
		err := collector.Run(ctx, collector.Settings{ConfigURIs: []string{collector.YAMLURI(doc)},
			Version: a.cfg.Version, Embedded: true})
		if ctx.Err() != nil {
			return
		}
		a.cfg.Logger.Warn("embedded collector stopped; restarting", "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Second):
		}
	}
}

// exporterTLS gives the exporter the same trust and client certificate as
// the agent's API client: the CA file, or for a pinned fingerprint the
// pinned certificate itself (pinnedServerCA).
func (a *Agent) exporterTLS(ctx context.Context) collector.ExporterTLS {
	var t collector.ExporterTLS
	t.CAFile = a.cfg.CAFile
	if pinned := a.pinnedServerCA(ctx); pinned != "" {
		t.CAFile = pinned
	}
	crt, key := filepath.Join(a.cfg.DataDir, credentials.CertFile), filepath.Join(a.cfg.DataDir, credentials.KeyFile)
	if _, err := os.Stat(key); err == nil {
		t.CertFile, t.KeyFile = crt, key
	}
	return t
}
