package oidcauth

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"

	"github.com/heteroflow/heteroflow/controlplane/auth"
)

// ProviderConfig is one entry of the `auth.oidc` list.
type ProviderConfig struct {
	// Name keys the provider in URLs and in accounts' auth_source
	// (oidc:<name>); lower-case letters, digits and '-'.
	Name string `yaml:"name"`
	// DisplayName labels the console's "Sign in with …" button.
	DisplayName string `yaml:"display_name"`
	// Issuer is the provider's issuer URL; its discovery document is read
	// from <issuer>/.well-known/openid-configuration.
	Issuer   string `yaml:"issuer"`
	ClientID string `yaml:"client_id"`
	// ClientSecretFile holds the client secret; empty with no
	// HETEROFLOW_OIDC_<NAME>_CLIENT_SECRET either means a public client
	// (PKCE only).
	ClientSecretFile string `yaml:"client_secret_file"`
	ClientSecret     string `yaml:"-"`
	// Scopes requested; default openid, profile, email. Add the scope
	// that releases the groups claim where the provider needs one (Dex:
	// groups); some providers refuse scopes they do not know.
	Scopes []string `yaml:"scopes,omitempty"`
	// RedirectURL is the callback registered at the provider; empty: the
	// address the browser used + /api/v1/auth/oidc/<name>/callback.
	RedirectURL string `yaml:"redirect_url"`
	// UsernameClaim names the account (default preferred_username);
	// GroupsClaim holds the groups or roles the Mapping reads (default
	// groups; a list or one string).
	UsernameClaim string `yaml:"username_claim"`
	GroupsClaim   string `yaml:"groups_claim"`
	// PostLogoutRedirectURL is where the provider sends the browser after
	// RP-initiated logout (default: the console's /login).
	PostLogoutRedirectURL string `yaml:"post_logout_redirect_url"`

	auth.Mapping `yaml:",inline"`
}

var providerName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,31}$`)

// Validate names the provider's first problems.
func (p ProviderConfig) Validate(i int) error {
	var errs []error
	bad := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf("auth.oidc[%d] (%s): "+format, append([]any{i, p.Name}, a...)...))
	}
	if !providerName.MatchString(p.Name) {
		bad("name must be 1–32 lower-case letters, digits or '-'")
	}
	if u, err := url.Parse(p.Issuer); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		bad("issuer %q must be an https:// URL", p.Issuer)
	} else if u.Scheme == "http" && !loopback(u.Hostname()) {
		bad("issuer %q must use https (http only on a loopback address)", p.Issuer)
	}
	if p.ClientID == "" {
		bad("client_id is required")
	}
	for _, v := range []struct{ name, val string }{{"redirect_url", p.RedirectURL}, {"post_logout_redirect_url", p.PostLogoutRedirectURL}} {
		if v.val == "" {
			continue
		}
		if u, err := url.Parse(v.val); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			bad("%s %q must be an absolute http(s) URL", v.name, v.val)
		}
	}
	if err := p.Mapping.Validate(fmt.Sprintf("auth.oidc[%d]", i)); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func loopback(host string) bool {
	return host == "localhost" || strings.HasPrefix(host, "127.") || host == "::1"
}

// ValidateAll checks every provider and that names are unique.
func ValidateAll(ps []ProviderConfig) error {
	var errs []error
	seen := map[string]bool{}
	for i, p := range ps {
		if err := p.Validate(i); err != nil {
			errs = append(errs, err)
		}
		if seen[p.Name] {
			errs = append(errs, fmt.Errorf("auth.oidc[%d]: name %q is used twice", i, p.Name))
		}
		seen[p.Name] = true
	}
	return errors.Join(errs...)
}

// SecretEnv is the variable that may hold provider name's client secret.
func SecretEnv(name string) string {
	return "HETEROFLOW_OIDC_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_")) + "_CLIENT_SECRET"
}

// LoadSecret reads the client secret from ClientSecretFile or SecretEnv.
func (p *ProviderConfig) LoadSecret(getenv func(string) string) error {
	if p.ClientSecretFile != "" {
		b, err := os.ReadFile(p.ClientSecretFile)
		if err != nil {
			return fmt.Errorf("auth.oidc %s: client_secret_file: %w", p.Name, err)
		}
		p.ClientSecret = strings.TrimRight(string(b), "\r\n")
		return nil
	}
	p.ClientSecret = getenv(SecretEnv(p.Name))
	return nil
}

func (p ProviderConfig) withDefaults() ProviderConfig {
	if p.DisplayName == "" {
		p.DisplayName = p.Name
	}
	if p.UsernameClaim == "" {
		p.UsernameClaim = "preferred_username"
	}
	if p.GroupsClaim == "" {
		p.GroupsClaim = "groups"
	}
	if len(p.Scopes) == 0 {
		p.Scopes = []string{"openid", "profile", "email"}
	}
	hasOpenID := false
	for _, s := range p.Scopes {
		hasOpenID = hasOpenID || s == "openid"
	}
	if !hasOpenID {
		p.Scopes = append([]string{"openid"}, p.Scopes...)
	}
	return p
}
