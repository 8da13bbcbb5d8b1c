package ldapauth

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/heteroflow/heteroflow/controlplane/auth"
)

// Config is the `auth.ldap` section of the server configuration. LDAP
// sign-in is on when URLs is not empty.
type Config struct {
	// URLs are tried in order: ldaps://host:636, or ldap://host:389 (with
	// StartTLS, or in clear only on a loopback address).
	URLs     []string `yaml:"urls,omitempty"`
	StartTLS bool     `yaml:"start_tls"`
	// CAFile verifies the directory's certificate (PEM); empty uses the
	// system's roots.
	CAFile string `yaml:"ca_file"`
	// BindDN and the password in BindPasswordFile (or the environment's
	// HETEROFLOW_LDAP_BIND_PASSWORD) are the service account that searches.
	BindDN           string `yaml:"bind_dn"`
	BindPasswordFile string `yaml:"bind_password_file"`
	BindPassword     string `yaml:"-"` // loaded by LoadSecret, never written or logged

	UserBase string `yaml:"user_base"`
	// UserFilter finds the user; {username} is replaced by the escaped
	// username typed at login. Default (uid={username}).
	UserFilter      string `yaml:"user_filter"`
	UsernameAttr    string `yaml:"username_attribute"` // default uid
	DisplayNameAttr string `yaml:"display_name_attribute"`
	EmailAttr       string `yaml:"email_attribute"`

	// MemberOfAttr reads groups from the user's entry (e.g. memberOf);
	// when empty, groups are searched in GroupBase with GroupFilter, where
	// {dn} and {username} are replaced by the escaped user DN and name.
	MemberOfAttr  string `yaml:"member_of_attribute"`
	GroupBase     string `yaml:"group_base"`
	GroupFilter   string `yaml:"group_filter"`         // default (member={dn})
	GroupNameAttr string `yaml:"group_name_attribute"` // default cn
	// DisabledFilter marks an account the directory disabled: a user whose
	// entry matches it is refused here and disabled, e.g.
	// (employeeType=disabled) or (pwdAccountLockedTime=*).
	DisabledFilter string `yaml:"disabled_filter"`

	Timeout time.Duration `yaml:"timeout"` // per connection and request, default 5s

	auth.Mapping `yaml:",inline"`
}

// Enabled reports whether LDAP sign-in is configured.
func (c Config) Enabled() bool { return len(c.URLs) > 0 }

// withDefaults fills the attributes and filters left empty.
func (c Config) withDefaults() Config {
	def := func(v *string, d string) {
		if *v == "" {
			*v = d
		}
	}
	def(&c.UserFilter, "(uid={username})")
	def(&c.UsernameAttr, "uid")
	def(&c.DisplayNameAttr, "cn")
	def(&c.EmailAttr, "mail")
	def(&c.GroupFilter, "(member={dn})")
	def(&c.GroupNameAttr, "cn")
	if c.Timeout <= 0 {
		c.Timeout = 5 * time.Second
	}
	return c
}

// Validate reports every problem, each naming its setting.
func (c Config) Validate() error {
	if !c.Enabled() {
		return nil
	}
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf("auth.ldap."+format, a...)) }
	for _, raw := range c.URLs {
		u, err := url.Parse(raw)
		switch {
		case err != nil || u.Host == "" || (u.Scheme != "ldap" && u.Scheme != "ldaps"):
			bad("urls entry %q must be ldap://host:port or ldaps://host:port", raw)
		case u.Scheme == "ldaps" && c.StartTLS:
			bad("start_tls applies to ldap:// URLs, not %q", raw)
		case u.Scheme == "ldap" && !c.StartTLS && !loopback(u.Hostname()):
			bad("urls entry %q would send passwords in clear: use ldaps:// or start_tls", raw)
		}
	}
	if c.BindDN == "" {
		bad("bind_dn is required (the service account that searches users)")
	}
	if c.UserBase == "" {
		bad("user_base is required")
	}
	if c.UserFilter != "" && !strings.Contains(c.UserFilter, "{username}") {
		bad("user_filter %q must contain {username}", c.UserFilter)
	}
	if c.MemberOfAttr == "" && c.GroupBase == "" && (len(c.Roles) > 0 || len(c.Tenants) > 0) {
		bad("group rules need member_of_attribute or group_base")
	}
	if c.Timeout < 0 {
		bad("timeout must not be negative")
	}
	if err := c.Mapping.Validate("auth.ldap"); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func loopback(host string) bool {
	return host == "localhost" || strings.HasPrefix(host, "127.") || host == "::1"
}

// EnvBindPassword holds the service account's password when no
// bind_password_file is set.
const EnvBindPassword = "HETEROFLOW_LDAP_BIND_PASSWORD"

// LoadSecret reads the service account's password from BindPasswordFile
// (trailing newline dropped) or getenv(EnvBindPassword).
func (c *Config) LoadSecret(getenv func(string) string) error {
	if !c.Enabled() {
		return nil
	}
	if c.BindPasswordFile != "" {
		b, err := os.ReadFile(c.BindPasswordFile)
		if err != nil {
			return fmt.Errorf("auth.ldap.bind_password_file: %w", err)
		}
		c.BindPassword = strings.TrimRight(string(b), "\r\n")
	} else if v := getenv(EnvBindPassword); v != "" {
		c.BindPassword = v
	}
	if c.BindPassword == "" {
		return fmt.Errorf("auth.ldap: the service account's password is empty: set bind_password_file or %s", EnvBindPassword)
	}
	return nil
}
