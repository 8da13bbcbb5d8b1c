// Command oidc-test-provider serves the oidctest OpenID provider for the
// console's browser test (web/tests/sso.test.mjs). It is a test program:
// it is not part of the heteroflow binary and holds test users only.
//
//	go run ./controlplane/auth/oidcauth/oidctest/cmd/oidc-test-provider \
//	    --client-id heteroflow --client-secret s3cret \
//	    --user 'alice:alice-pass:Alice Liddell:hf-admins,team-a'
//
// It prints "issuer=<url>" on its first line once it serves.
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/heteroflow/heteroflow/controlplane/auth/oidcauth/oidctest"
)

type userFlags []oidctest.User

func (u *userFlags) String() string { return fmt.Sprint(len(*u), " users") }

// Set parses username:password:name:group1,group2.
func (u *userFlags) Set(v string) error {
	parts := strings.SplitN(v, ":", 4)
	if len(parts) < 2 {
		return fmt.Errorf("--user %q: want username:password[:name[:groups]]", v)
	}
	usr := oidctest.User{Subject: "sub-" + parts[0], Username: parts[0], Password: parts[1], Email: parts[0] + "@example.org"}
	if len(parts) > 2 {
		usr.Name = parts[2]
	}
	if len(parts) > 3 && parts[3] != "" {
		usr.Groups = strings.Split(parts[3], ",")
	}
	*u = append(*u, usr)
	return nil
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	clientID := flag.String("client-id", "heteroflow", "the relying party's client id")
	secret := flag.String("client-secret", "", "the relying party's client secret")
	var users userFlags
	flag.Var(&users, "user", "username:password[:name[:groups]] (repeatable)")
	flag.Parse()

	p, err := oidctest.New(oidctest.Options{ClientID: *clientID, ClientSecret: *secret, Users: users,
		RedirectURIGlobs:           []string{"http://127.0.0.1:*/api/v1/auth/oidc/*/callback"},
		PostLogoutRedirectURIGlobs: []string{"http://127.0.0.1:*/login"}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("issuer=http://%s\n", ln.Addr())
	if err := http.Serve(ln, p.Handler()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
