package daemon

import (
	"context"
	"time"

	"github.com/heteroflow/heteroflow/collector"
)

// runCollector runs the embedded collector with the receivers of every
// vendor found plus host metrics, remote-writing to the server with the
// node's key. A failure is logged and retried: metrics must not take the
// task runner down.
func (a *Agent) runCollector(ctx context.Context) {
	cfg := collector.AgentConfig{Vendors: vendorsOf(a.inv), ServerURL: a.cfg.Server, APIKey: a.creds.APIKey,
		HostMetrics: true, NodeName: a.creds.NodeID}
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
