// Package hub federates HeteroFlow clusters: a hub server registers member
// clusters (other HeteroFlow control planes, each a site or a region) by
// URL, API key and TLS pin, keeps a view of each (health, nodes, devices
// by vendor and model, free capacity, queue, firing alerts, usage) that
// its leader polls, places tasks on the best member by a cluster-level
// score and follows them there, and fans PromQL out over the members'
// query APIs with a cluster label on every series.
//
// The hub talks to members only through their REST API
// (controlplane/client over controlplane/apitypes), never their
// internals. Its REST routes live in the HTTP layer (httpapi's hub
// handlers); the state it keeps is controlplane.ClusterStore.
//
//	register ──check (reachable, key, version)──▶ store (key sealed)
//	leader poll ─▶ member summary APIs ─▶ store (summary, status) ─▶ GET /clusters
//	             └▶ forwarded tasks' states (member gone → unknown)
//	submit (cluster: auto) ─▶ fresh summaries ─▶ score ─▶ forward (Idempotency-Key) ─▶ follow
//	/prometheus/api/v1/query[_range] ─▶ every selected member ─▶ + cluster label ─▶ merged
package hub
