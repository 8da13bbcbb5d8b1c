package oidcauth

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/auth"
)

func TestSafeReturnKeepsOnlyThisSitesPaths(t *testing.T) {
	for in, want := range map[string]string{
		"/tasks?state=running": "/tasks?state=running",
		"":                     "/",
		"tasks":                "/",
		"//evil.example/x":     "/",
		"/\\evil.example":      "/",
		"https://evil.example": "/",
		"/ok\r\nSet-Cookie: x": "/",
	} {
		require.Equal(t, want, SafeReturn(in), "%q", in)
	}
}

func TestSealedCookies(t *testing.T) {
	s, err := newSealer([]byte(strings.Repeat("k", 32)))
	require.NoError(t, err)
	v, err := s.seal("flow", flow{State: "st", Nonce: "n"})
	require.NoError(t, err)
	var f flow
	require.NoError(t, s.open("flow", v, &f))
	require.Equal(t, "st", f.State)

	require.Error(t, s.open("handoff", v, &f), "a flow cookie is not a hand-off cookie")
	other, err := newSealer([]byte(strings.Repeat("j", 32)))
	require.NoError(t, err)
	require.Error(t, other.open("flow", v, &f), "another server key does not open it")
	tampered := []byte(v)
	tampered[len(tampered)-2] ^= 1
	require.Error(t, s.open("flow", string(tampered), &f))
	require.Error(t, s.open("flow", "not base64 !", &f))
	_, err = newSealer([]byte("short"))
	require.Error(t, err)
}

func TestProviderConfigValidation(t *testing.T) {
	good := ProviderConfig{Name: "corp", Issuer: "https://sso.example.org/realms/main", ClientID: "hf"}
	require.NoError(t, ValidateAll([]ProviderConfig{good}))
	for name, mutate := range map[string]func(p *ProviderConfig){
		"name with capitals":          func(p *ProviderConfig) { p.Name = "Corp" },
		"http issuer off loopback":    func(p *ProviderConfig) { p.Issuer = "http://sso.example.org" },
		"no issuer":                   func(p *ProviderConfig) { p.Issuer = "" },
		"no client id":                func(p *ProviderConfig) { p.ClientID = "" },
		"relative redirect url":       func(p *ProviderConfig) { p.RedirectURL = "/cb" },
		"agent role from a group":     func(p *ProviderConfig) { p.Roles = []auth.GroupRole{{Group: "g", Role: controlplane.RoleAgent}} },
		"tenant rule without tenant":  func(p *ProviderConfig) { p.Tenants = []auth.GroupTenant{{Group: "g"}} },
		"unknown tenant role in rule": func(p *ProviderConfig) { p.Tenants = []auth.GroupTenant{{Group: "g", Tenant: "t", Role: "owner"}} },
	} {
		p := good
		mutate(&p)
		require.Error(t, ValidateAll([]ProviderConfig{p}), name)
	}
	require.Error(t, ValidateAll([]ProviderConfig{good, good}), "a name used twice")
	loop := good
	loop.Issuer = "http://127.0.0.1:5556"
	require.NoError(t, ValidateAll([]ProviderConfig{loop}), "http is fine on loopback (tests, a local Dex)")

	d := good.withDefaults()
	require.Equal(t, []string{"openid", "profile", "email"}, d.Scopes)
	require.Equal(t, "preferred_username", d.UsernameClaim)
	noOpenID := good
	noOpenID.Scopes = []string{"profile"}
	require.Equal(t, []string{"openid", "profile"}, noOpenID.withDefaults().Scopes)
}
