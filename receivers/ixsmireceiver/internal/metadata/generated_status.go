// Package metadata holds what mdatagen would generate from ../../metadata.yaml
// (written by hand: the module proxy does not serve mdatagen; the receiver's
// metadata test checks this file against the YAML).
package metadata

import "go.opentelemetry.io/collector/component"

// Type, scope and stability of the ixsmi receiver.
var (
	Type      = component.MustNewType("ixsmi")
	ScopeName = "github.com/heteroflow/heteroflow/receivers/ixsmireceiver"
)

// MetricsStability is the receiver's stability for metrics.
const MetricsStability = component.StabilityLevelAlpha
