// Package pki is the control plane's small certificate authority for
// mTLS between node agents and the server: it creates (or loads) an ECDSA
// P-256 CA, signs agent CSRs into short-lived client certificates whose
// CommonName is the node id, and builds the pools the listeners verify
// client certificates against. Private keys are written with mode 0600.
package pki
