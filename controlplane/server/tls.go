package server

import (
	"crypto/tls"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/heteroflow/heteroflow/controlplane/pki"
)

// TLSConfig makes the API and console listeners serve HTTPS and, with
// MTLS, lets node agents authenticate with client certificates issued by
// the server's CA at enrollment.
type TLSConfig struct {
	Cert string `yaml:"cert"` // server certificate chain (PEM)
	Key  string `yaml:"key"`  // its private key (PEM)
	// MTLS signs agent CSRs at enrollment and verifies client
	// certificates. Clients without one (browsers, API keys, the CLI)
	// still connect: the listener asks for a certificate but does not
	// require it; a presented one must chain to the CA.
	MTLS bool `yaml:"mtls"`
	// ClientCA/CAKey are an operator-provided CA; both empty = an ECDSA
	// P-256 CA generated once in <data_dir>/pki.
	ClientCA string `yaml:"client_ca"`
	CAKey    string `yaml:"ca_key"`
	// RequireAgentCert refuses agent API keys presented without a client
	// certificate (401), so a leaked key alone is useless.
	RequireAgentCert bool `yaml:"require_agent_cert"`
	// AgentCertValidity is the life of the agent certificates the server
	// signs (default 90 days); agents renew at two thirds of it.
	AgentCertValidity Duration `yaml:"agent_cert_validity"`
}

// Enabled reports whether the listeners serve HTTPS.
func (t TLSConfig) Enabled() bool { return t.Cert != "" }

func (t TLSConfig) validate() []error {
	var errs []error
	bad := func(s string) { errs = append(errs, errors.New(s)) }
	switch {
	case t.Cert != "" && t.Key == "":
		bad("tls.cert is set but tls.key is not: HTTPS needs both the certificate and its private key (--tls-key)")
	case t.Key != "" && t.Cert == "":
		bad("tls.key is set but tls.cert is not: HTTPS needs both the certificate and its private key (--tls-cert)")
	}
	if t.MTLS && !t.Enabled() {
		bad("tls.mtls needs HTTPS: set tls.cert and tls.key (--tls-cert, --tls-key); client certificates only exist inside TLS")
	}
	if (t.ClientCA == "") != (t.CAKey == "") {
		bad("tls.client_ca and tls.ca_key go together (the server signs agent certificates with that CA); leave both empty to auto-generate a CA in <data_dir>/pki")
	}
	if t.ClientCA != "" && !t.MTLS {
		bad("tls.client_ca is set but tls.mtls is off: enable --mtls or remove the CA")
	}
	if t.AgentCertValidity < 0 {
		bad("tls.agent_cert_validity must not be negative (empty = 90 days)")
	}
	if t.RequireAgentCert && !t.MTLS {
		bad("tls.require_agent_cert needs tls.mtls: agents can only present certificates the server issued")
	}
	return errs
}

// loadCA returns the agent CA when mTLS is on (nil otherwise).
func (c Config) loadCA() (*pki.CA, error) {
	if !c.TLS.MTLS {
		return nil, nil
	}
	if c.TLS.ClientCA != "" {
		return pki.Load(c.TLS.ClientCA, c.TLS.CAKey)
	}
	return pki.LoadOrCreate(filepath.Join(c.DataDir, "pki"))
}

// tlsConfig is the listeners' TLS configuration, nil without HTTPS.
func (c Config) tlsConfig(ca *pki.CA) (*tls.Config, error) {
	if !c.TLS.Enabled() {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(c.TLS.Cert, c.TLS.Key)
	if err != nil {
		return nil, fmt.Errorf("tls: load %s / %s: %w", c.TLS.Cert, c.TLS.Key, err)
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
	if ca != nil {
		// Ask, don't require: the console in a browser and API-key clients
		// have no certificate. One that is presented must chain to the CA,
		// or the handshake fails.
		tc.ClientAuth = tls.VerifyClientCertIfGiven
		tc.ClientCAs = ca.Pool()
	}
	return tc, nil
}
