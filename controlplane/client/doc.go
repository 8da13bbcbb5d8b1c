// Package client is a small Go client of the HeteroFlow REST API, used by the
// CLI commands (`heteroflow login`, `heteroflow task …`, `heteroflow bench`).
// It authenticates with an API key or with saved login credentials, and
// refreshes an expired access token automatically (rotating and saving the
// refresh token).
package client
