// Package collector is HeteroFlow's OpenTelemetry Collector distribution:
// the eleven vendor receivers, contrib's host_metrics receiver (cpu, memory,
// disk, network, filesystem), the host_resource processor (see
// collector/hostresource for why it replaces contrib's resourcedetection),
// batch and memory_limiter, and the otlp_http, prometheus_remote_write,
// prometheus and debug exporters.
//
// `heteroflow collector --config FILE` runs it from a YAML file (Run); the
// node agent embeds it with a config built for the vendors found on its node
// (AgentConfig.YAML).
package collector
