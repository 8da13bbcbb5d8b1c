// Package hwmetrics is the metric builder every HeteroFlow vendor receiver
// shares: the hw.gpu.* metrics of the OpenTelemetry hardware semantic
// conventions, defined once in metadata.yaml.
//
// mdatagen would generate this package from metadata.yaml, but the module
// proxy does not serve go.opentelemetry.io/collector/cmd/mdatagen, so the
// builder is written by hand in mdatagen's shape (a per-metric enabled flag
// under `metrics:` in the receiver config, Record…DataPoint methods, Emit).
// metadata_test.go reads metadata.yaml and fails when the two disagree, so the
// YAML stays the single source of names, units, kinds and attributes.
package hwmetrics
