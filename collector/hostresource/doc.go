// Package hostresource is a small processor that stamps every metric's
// resource with the host it was collected on: host.name, host.id
// (/etc/machine-id), host.arch and os.type, per the OpenTelemetry host and os
// semantic conventions.
//
// It stands in for contrib's resourcedetectionprocessor with its `system`
// detector, which this distribution cannot take: its v0.165.1 release (the
// contrib release every other component here is at) requires go ≥ 1.26.9
// while the project builds with go1.26.8 and GOTOOLCHAIN=local, and it links
// every cloud detector (EC2, ECS, EKS, GCP, Azure, Consul, Docker, k8s, …)
// into a node binary that needs none of them. The `system` detector's part
// we need is four attributes read once at start.
package hostresource
