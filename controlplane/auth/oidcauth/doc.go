// Package oidcauth is HeteroFlow's OpenID Connect relying party: single
// sign-on at the providers of `auth.oidc` with the authorization-code
// flow, PKCE (S256), state and nonce.
//
//	console "Sign in with X" → GET …/oidc/X/start: flow cookie (sealed:
//	state, nonce, PKCE verifier, return path) + redirect to the provider →
//	provider signs the user in → GET …/oidc/X/callback?code&state: state
//	checked against the cookie, code exchanged with the verifier, ID token
//	verified (signature, issuer, audience, expiry) and its nonce checked →
//	claims → auth.ExternalLogin (account created or updated, mapped role
//	and tenants) → our own session, handed to the console through a sealed
//	one-use cookie it redeems with POST …/oidc/session.
//
// Both cookies are sealed with AES-GCM under a key derived from the JWT
// signing key, so every server of a cluster can finish a flow another
// started, and nothing about a flow is kept in memory.
package oidcauth
