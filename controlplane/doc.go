// Package controlplane holds HeteroFlow's domain: the types the control plane
// stores and serves (users, API keys, tasks and their events, the audit log)
// and the Store interface every persistence backend implements.
//
// Layout (in the style of benbjohnson/wtf):
//
//	controlplane            domain types, Store interface, sentinel errors (this package)
//	controlplane/sqlite     Store on modernc.org/sqlite (embedded default, WAL)
//	controlplane/postgres   Store on jackc/pgx/v5
//	controlplane/storetest  one conformance suite run against every Store
//	controlplane/auth       passwords, JWT, refresh tokens, RBAC permission table
//	controlplane/httpapi    REST API (chi + huma, OpenAPI 3.1) and middleware
//	controlplane/server     configuration and wiring of `heteroflow server`
//
// Nothing above the store implementations imports a database driver; driver
// errors become the sentinels below at the store boundary.
package controlplane
