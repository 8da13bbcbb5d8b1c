package ingest

import (
	"fmt"

	"github.com/prometheus/prometheus/model/labels"
)

// HostLabel names the node a series describes: the agent's collector sets
// it to the node id, the scheduler's LoadAware reads live utilisation by
// it, alerts name their node with it.
const HostLabel = "host_name"

// checkHost refuses a series that names another host than host, the only
// one the push may write for ("" = any). A series without the label is
// left alone: it describes no node.
func checkHost(ls labels.Labels, host string) error {
	if host == "" {
		return nil
	}
	if got := ls.Get(HostLabel); got != "" && got != host {
		return fmt.Errorf("%w: series for %s %q, but this agent key pushes for node %q only: %s",
			ErrRejected, HostLabel, got, host, clip(ls.String()))
	}
	return nil
}
