// Package auth holds HeteroFlow's security primitives: password hashing and
// policy (argon2id), short-lived JWT access tokens, opaque rotating refresh
// tokens with reuse detection, API keys, login rate limiting and lockout, and
// the one RBAC permission table (resource × action → roles).
//
// Service ties them to a controlplane.Store: Login, Refresh, Logout and
// Authenticate (bearer JWT or API key) are the only entry points the HTTP
// layer uses. Secrets never reach the store in clear: passwords are argon2id
// hashes, refresh tokens and API-key secrets are SHA-256 hashes (both are
// 256-bit random values, so a fast hash is enough; a slow KDF is only needed
// for low-entropy human passwords).
//
// Time comes from an injected clock so expiry, lockout and rate limiting are
// tested without sleeping.
package auth
