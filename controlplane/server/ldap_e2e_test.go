package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/auth/ldapauth/ldaptest"
)

const ldapSeed = `dn: ou=people,dc=example,dc=org
objectClass: organizationalUnit
ou: people

dn: uid=svc,ou=people,dc=example,dc=org
objectClass: inetOrgPerson
uid: svc
cn: svc
sn: svc
userPassword: svc-secret

dn: uid=alice,ou=people,dc=example,dc=org
objectClass: inetOrgPerson
uid: alice
cn: Alice
sn: A
userPassword: alice-pass

dn: cn=ops,dc=example,dc=org
objectClass: groupOfNames
cn: ops
member: uid=alice,ou=people,dc=example,dc=org
`

// TestLDAPLoginThroughTheServer: the auth.ldap section of a config file,
// the bind password from the environment, a login over HTTP that creates
// the account, and a directory that goes down answering 503 with its code
// — each attempt audited.
func TestLDAPLoginThroughTheServer(t *testing.T) {
	dir := ldaptest.Start(t, ldapSeed)
	cfgFile := filepath.Join(t.TempDir(), "server.yaml")
	require.NoError(t, os.WriteFile(cfgFile, []byte(`auth:
  ldap:
    urls: [`+dir.URL+`]
    start_tls: true
    ca_file: `+dir.CAFile+`
    bind_dn: uid=svc,ou=people,dc=example,dc=org
    user_base: ou=people,dc=example,dc=org
    group_base: dc=example,dc=org
    group_roles:
      - {group: ops, role: operator}
`), 0o600))
	env := map[string]string{"HETEROFLOW_LDAP_BIND_PASSWORD": "svc-secret", EnvAdminPassword: "Root-Passw0rd!9x"}
	cfg, err := Load(cfgFile, func(k string) string { return env[k] })
	require.NoError(t, err)
	require.NoError(t, cfg.Validate())
	cfg.APIAddr, cfg.ConsoleAddr, cfg.DataDir = "127.0.0.1:0", "", t.TempDir()
	s := startConfigured(t, cfg, env)
	base := "http://" + s.APIAddr() + "/api/v1/auth/login"

	post := func(user, pass string) (int, map[string]any) {
		body, _ := json.Marshal(map[string]string{"username": user, "password": pass})
		resp, err := http.Post(base, "application/json", strings.NewReader(string(body)))
		require.NoError(t, err)
		defer resp.Body.Close()
		var out map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
		return resp.StatusCode, out
	}
	st, out := post("alice", "alice-pass")
	require.Equal(t, http.StatusOK, st, out)
	user := out["user"].(map[string]any)
	require.Equal(t, "ldap", user["auth_source"])
	require.Equal(t, "operator", user["role"])

	// An administrator cannot give the LDAP account a local password.
	_, adm := post("admin", "Root-Passw0rd!9x")
	req, _ := http.NewRequest(http.MethodPatch, "http://"+s.APIAddr()+"/api/v1/users/"+fmt.Sprint(user["id"]),
		strings.NewReader(`{"password":"Another-Passw0rd!1"}`))
	req.Header.Set("Authorization", "Bearer "+adm["access_token"].(string))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	var perr map[string]map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&perr))
	resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Equal(t, "external_account_password", perr["error"]["code"])

	st, out = post("alice", "nope")
	require.Equal(t, http.StatusUnauthorized, st)
	require.Equal(t, "unauthenticated", out["error"].(map[string]any)["code"])

	dir.Stop()
	st, out = post("alice", "alice-pass")
	require.Equal(t, http.StatusServiceUnavailable, st, out)
	e := out["error"].(map[string]any)
	require.Equal(t, "ldap_unavailable", e["code"])
	require.NotContains(t, e["message"], "svc-secret")

	require.NoError(t, s.Auditor().Flush(t.Context()))
	entries, _, err := s.Store().ListAudit(t.Context(), controlplane.AuditFilter{Query: "auth.login", Actor: "alice"})
	require.NoError(t, err)
	var results []string
	for _, en := range entries {
		results = append(results, en.Result)
	}
	require.Len(t, results, 3, "success, wrong password and directory down are each audited: %v", results)
}
