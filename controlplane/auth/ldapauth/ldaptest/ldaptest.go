// Package ldaptest runs a real OpenLDAP server (Debian's slapd) for tests:
// a temporary configuration and database on a loopback port, with TLS
// (StartTLS) from a test CA, seeded with ldapadd. It is test support only;
// no production code imports it.
package ldaptest

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Suffix, RootDN and RootPassword are the test directory's base and its
// administrator (used only to seed and change it).
const (
	Suffix       = "dc=example,dc=org"
	RootDN       = "cn=admin," + Suffix
	RootPassword = "root-secret"
)

// Server is a running slapd.
type Server struct {
	URL      string // ldap://127.0.0.1:port (StartTLS offered)
	LDAPSURL string // ldaps://127.0.0.1:port (TLS from the first byte)
	CAFile   string // PEM of the CA that signed the server's certificate
	dir      string
	cmd      *exec.Cmd
	t        testing.TB
}

// binaries finds slapd and ldapadd; the Debian packages put slapd in /usr/sbin.
func binaries() (slapd, ldapadd, ldapmodify string, ok bool) {
	find := func(name string, extra ...string) string {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
		for _, p := range extra {
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
		return ""
	}
	slapd = find("slapd", "/usr/sbin/slapd")
	ldapadd = find("ldapadd")
	ldapmodify = find("ldapmodify")
	return slapd, ldapadd, ldapmodify, slapd != "" && ldapadd != "" && ldapmodify != ""
}

// Start runs slapd seeded with ldif (entries under Suffix; the base entry
// is added first). Without slapd the test is skipped, except under CI
// (CI=true), where a missing slapd fails it: `make deps` installs it.
func Start(t testing.TB, ldif string) *Server {
	t.Helper()
	slapd, _, _, ok := binaries()
	if !ok {
		if os.Getenv("CI") == "true" {
			t.Fatal("slapd/ldapadd not found: install Debian's slapd and ldap-utils (make deps); CI must run the LDAP tests")
		}
		t.Skip("slapd/ldapadd not found: install Debian's slapd and ldap-utils (make deps) to run the LDAP tests against a real OpenLDAP")
	}
	dir := t.TempDir()
	caFile := writeTLS(t, dir)
	port, tlsPort := freePort(t), freePort(t)
	conf := fmt.Sprintf(`include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/nis.schema
include /etc/ldap/schema/inetorgperson.schema
pidfile %[1]s/slapd.pid
modulepath /usr/lib/ldap
moduleload back_mdb
moduleload memberof
TLSCACertificateFile %[1]s/ca.pem
TLSCertificateFile %[1]s/server.pem
TLSCertificateKeyFile %[1]s/server.key
database mdb
maxsize 16777216
suffix "%[2]s"
rootdn "%[3]s"
rootpw %[4]s
directory %[1]s/db
# keeps memberOf on each member's entry, for member_of_attribute
overlay memberof
access to attrs=userPassword by self write by anonymous auth by * none
access to * by * read
`, dir, Suffix, RootDN, RootPassword)
	if err := os.MkdirAll(filepath.Join(dir, "db"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "slapd.conf"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	s := &Server{URL: "ldap://127.0.0.1:" + strconv.Itoa(port), LDAPSURL: "ldaps://127.0.0.1:" + strconv.Itoa(tlsPort), CAFile: caFile, dir: dir, t: t}
	s.cmd = exec.Command(slapd, "-f", filepath.Join(dir, "slapd.conf"), "-h", s.URL+"/ "+s.LDAPSURL+"/", "-d", "0")
	var out bytes.Buffer
	s.cmd.Stdout, s.cmd.Stderr = &out, &out
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start slapd: %v", err)
	}
	t.Cleanup(s.Stop)
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), 200*time.Millisecond)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("slapd did not listen on %s: %s", s.URL, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	base := fmt.Sprintf("dn: %s\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: Example\n\n", Suffix)
	s.Apply("add", base+ldif)
	return s
}

// Apply runs ldapadd (op "add") or ldapmodify (op "modify") as the
// directory's administrator.
func (s *Server) Apply(op, ldif string) {
	s.t.Helper()
	_, ldapadd, ldapmodify, _ := binaries()
	bin := ldapadd
	if op == "modify" {
		bin = ldapmodify
	}
	cmd := exec.Command(bin, "-x", "-H", s.URL, "-D", RootDN, "-w", RootPassword)
	cmd.Stdin = strings.NewReader(ldif)
	if out, err := cmd.CombinedOutput(); err != nil {
		s.t.Fatalf("%s: %v: %s", filepath.Base(bin), err, out)
	}
}

// Stop ends slapd (the directory is then down); safe to call twice.
func (s *Server) Stop() {
	if s.cmd == nil || s.cmd.Process == nil || s.cmd.ProcessState != nil {
		return
	}
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// writeTLS writes a test CA and a server certificate for 127.0.0.1 and
// localhost into dir; it returns the CA's file.
func writeTLS(t testing.TB, dir string) string {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ldaptest CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), DNSNames: []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, typ string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("server.pem", "CERTIFICATE", der)
	write("server.key", "PRIVATE KEY", keyDER)
	return write("ca.pem", "CERTIFICATE", caDER)
}
