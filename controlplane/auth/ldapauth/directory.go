package ldapauth

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strings"

	"github.com/go-ldap/ldap/v3"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/auth"
)

// Stable codes of a directory that could not answer (HTTP 503).
const (
	CodeUnavailable   = "ldap_unavailable"
	CodeServiceBind   = "ldap_service_bind_failed"
	CodeDirectoryFail = "ldap_directory_error"
)

// Directory is an auth.Directory over LDAP.
type Directory struct {
	cfg  Config
	tls  *tls.Config
	log  *slog.Logger
	dial func(ctx context.Context, rawURL string) (*ldap.Conn, error)
}

var _ auth.Directory = (*Directory)(nil)

// New checks cfg (with its secret loaded) and builds the Directory.
func New(cfg Config, log *slog.Logger) (*Directory, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.BindPassword == "" {
		return nil, errors.New("auth.ldap: the service account's password is not loaded")
	}
	if log == nil {
		log = slog.Default()
	}
	cfg = cfg.withDefaults()
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if cfg.CAFile != "" {
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("auth.ldap.ca_file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("auth.ldap.ca_file %s holds no PEM certificate", cfg.CAFile)
		}
		tc.RootCAs = pool
	}
	d := &Directory{cfg: cfg, tls: tc, log: log}
	d.dial = d.dialURL
	return d, nil
}

// Mapping is the group → role and tenant rules.
func (d *Directory) Mapping() auth.Mapping { return d.cfg.Mapping }

func unavailable(format string, a ...any) error {
	return controlplane.Coded(controlplane.ErrUnavailable, CodeUnavailable, nil,
		"the directory server cannot be reached; sign-in is refused until it answers ("+format+")", a...)
}

func (d *Directory) dialURL(ctx context.Context, rawURL string) (*ldap.Conn, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	tc := d.tls.Clone()
	tc.ServerName = u.Hostname()
	dialer := &net.Dialer{Timeout: d.cfg.Timeout}
	conn, err := ldap.DialURL(rawURL, ldap.DialWithDialer(dialer), ldap.DialWithTLSConfig(tc))
	if err != nil {
		return nil, err
	}
	conn.SetTimeout(d.cfg.Timeout)
	if d.cfg.StartTLS {
		if err := conn.StartTLS(tc); err != nil {
			conn.Close()
			return nil, fmt.Errorf("StartTLS: %w", err)
		}
	}
	return conn, nil
}

// connect dials the URLs in order and binds as the service account.
func (d *Directory) connect(ctx context.Context) (*ldap.Conn, error) {
	var last error
	for _, u := range d.cfg.URLs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		conn, err := d.dial(ctx, u)
		if err != nil {
			d.log.Warn("directory server unreachable", "url", u, "err", err)
			last = err
			continue
		}
		if err := conn.Bind(d.cfg.BindDN, d.cfg.BindPassword); err != nil {
			conn.Close()
			if ldap.IsErrorWithCode(err, ldap.LDAPResultInvalidCredentials) {
				d.log.Error("directory refused the service account (auth.ldap.bind_dn / bind password)", "bind_dn", d.cfg.BindDN)
				return nil, controlplane.Coded(controlplane.ErrUnavailable, CodeServiceBind, nil,
					"the directory refused HeteroFlow's service account; sign-in is refused until an administrator fixes auth.ldap.bind_dn or its password")
			}
			d.log.Warn("directory service bind failed", "url", u, "err", err)
			last = err
			continue
		}
		return conn, nil
	}
	return nil, unavailable("%v", last)
}

// Authenticate is bind-search-bind; see the package comment.
func (d *Directory) Authenticate(ctx context.Context, username, password string) (*auth.ExternalIdentity, error) {
	if username == "" || password == "" {
		// An empty password is an anonymous bind, which many directories accept.
		return nil, auth.ErrDirectoryRejected
	}
	conn, err := d.connect(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	id, err := d.lookup(conn, username)
	if err != nil {
		return nil, err
	}
	// The password is checked last, on the DN the search found: whatever
	// the user typed never reaches a filter or a DN unescaped.
	if err := conn.Bind(id.ExternalID, password); err != nil {
		if ldap.IsErrorWithCode(err, ldap.LDAPResultInvalidCredentials) {
			return nil, auth.ErrDirectoryRejected
		}
		return nil, d.searchError("user bind", err)
	}
	return id, nil
}

// Lookup reads an account's entry by its DN (the ExternalID kept at its
// login), with its groups and disabled state, as the service account: a
// session refresh re-reads it, and a login whose username found no entry
// asks whether the account's own entry is gone. No password is involved,
// and nothing typed reaches the search.
func (d *Directory) Lookup(ctx context.Context, dn string) (*auth.ExternalIdentity, error) {
	if dn == "" {
		return nil, auth.ErrNoSuchDirectoryUser
	}
	conn, err := d.connect(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return d.read(conn, dn, ldap.ScopeBaseObject, "(objectClass=*)", dn)
}

// lookup searches the user (filter input escaped), their groups and the
// disabled filter on a connection bound as the service account.
func (d *Directory) lookup(conn *ldap.Conn, username string) (*auth.ExternalIdentity, error) {
	filter := strings.ReplaceAll(d.cfg.UserFilter, "{username}", ldap.EscapeFilter(username))
	return d.read(conn, d.cfg.UserBase, ldap.ScopeWholeSubtree, filter, username)
}

// read finds the one user entry that filter selects in base (scope) and
// reads its groups and disabled state; who names the search in the log.
func (d *Directory) read(conn *ldap.Conn, base string, scope int, filter, who string) (*auth.ExternalIdentity, error) {
	c := d.cfg
	attrs := []string{c.UsernameAttr, c.DisplayNameAttr, c.EmailAttr}
	if c.MemberOfAttr != "" {
		attrs = append(attrs, c.MemberOfAttr)
	}
	res, err := conn.Search(ldap.NewSearchRequest(base, scope, ldap.NeverDerefAliases,
		2, int(c.Timeout.Seconds()), false, filter, attrs, nil))
	if ldap.IsErrorWithCode(err, ldap.LDAPResultNoSuchObject) {
		return nil, auth.ErrNoSuchDirectoryUser
	}
	if err != nil && !ldap.IsErrorWithCode(err, ldap.LDAPResultSizeLimitExceeded) {
		return nil, d.searchError("user", err)
	}
	switch {
	case res == nil || len(res.Entries) == 0:
		return nil, auth.ErrNoSuchDirectoryUser
	case len(res.Entries) > 1:
		d.log.Error("auth.ldap.user_filter matches more than one entry; refusing the login", "username", who)
		return nil, fmt.Errorf("%w: the username is ambiguous in the directory", auth.ErrDirectoryRejected)
	}
	entry := res.Entries[0]
	id := &auth.ExternalIdentity{Source: controlplane.AuthSourceLDAP, ExternalID: entry.DN,
		Username:    entry.GetAttributeValue(c.UsernameAttr),
		DisplayName: entry.GetAttributeValue(c.DisplayNameAttr), Email: entry.GetAttributeValue(c.EmailAttr)}
	if id.Username == "" || len(id.Username) > 64 {
		d.log.Error("directory entry has no usable username attribute", "dn", entry.DN, "attribute", c.UsernameAttr)
		return nil, fmt.Errorf("%w: the directory entry has no %s", auth.ErrDirectoryRejected, c.UsernameAttr)
	}
	if id.Groups, err = d.groups(conn, entry); err != nil {
		return nil, err
	}
	if c.DisabledFilter != "" {
		dis, err := conn.Search(ldap.NewSearchRequest(entry.DN, ldap.ScopeBaseObject, ldap.NeverDerefAliases,
			1, int(c.Timeout.Seconds()), false, c.DisabledFilter, []string{"1.1"}, nil))
		if err != nil && !ldap.IsErrorWithCode(err, ldap.LDAPResultNoSuchObject) {
			return nil, d.searchError("disabled_filter", err)
		}
		id.Disabled = dis != nil && len(dis.Entries) > 0
	}
	return id, nil
}

// groups lists the entry's group DNs and names.
func (d *Directory) groups(conn *ldap.Conn, entry *ldap.Entry) ([]string, error) {
	c := d.cfg
	var out []string
	if c.MemberOfAttr != "" {
		for _, dn := range entry.GetAttributeValues(c.MemberOfAttr) {
			out = append(out, dn)
			if name := firstRDNValue(dn); name != "" {
				out = append(out, name)
			}
		}
		return out, nil
	}
	if c.GroupBase == "" {
		return nil, nil
	}
	filter := strings.NewReplacer("{dn}", ldap.EscapeFilter(entry.DN),
		"{username}", ldap.EscapeFilter(entry.GetAttributeValue(c.UsernameAttr))).Replace(c.GroupFilter)
	res, err := conn.Search(ldap.NewSearchRequest(c.GroupBase, ldap.ScopeWholeSubtree, ldap.NeverDerefAliases,
		0, int(c.Timeout.Seconds()), false, filter, []string{c.GroupNameAttr}, nil))
	if err != nil {
		return nil, d.searchError("groups", err)
	}
	for _, g := range res.Entries {
		out = append(out, g.DN)
		if name := g.GetAttributeValue(c.GroupNameAttr); name != "" {
			out = append(out, name)
		}
	}
	return out, nil
}

func firstRDNValue(dn string) string {
	parsed, err := ldap.ParseDN(dn)
	if err != nil || len(parsed.RDNs) == 0 || len(parsed.RDNs[0].Attributes) == 0 {
		return ""
	}
	return parsed.RDNs[0].Attributes[0].Value
}

// searchError: a directory that answered a search with an error (or
// dropped the connection) gives no answer, so the login fails closed.
func (d *Directory) searchError(what string, err error) error {
	d.log.Error("directory search failed; refusing the login", "step", what, "err", err)
	if ldap.IsErrorWithCode(err, ldap.ErrorNetwork) {
		return unavailable("%s", what)
	}
	return controlplane.Coded(controlplane.ErrUnavailable, CodeDirectoryFail, []string{"step", what},
		"the directory answered the %s lookup with an error; sign-in is refused until an administrator checks auth.ldap", what)
}
