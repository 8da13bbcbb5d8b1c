package app

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAlertChannelURLMaskedBelowOperator: WeCom, DingTalk and Feishu robots
// take their only credential in the URL (key=, access_token=, /hook/<token>).
// A tenant's members and viewers see the tenant's channels, so to them the
// url reads as scheme://host/******; the admins and operators who manage
// channels read it whole, and sending the masked url back in an update keeps
// the stored one.
func TestAlertChannelURLMaskedBelowOperator(t *testing.T) {
	s := startServer(t, t.TempDir())
	admin := s.adminToken()
	s.ok(http.StatusCreated, http.MethodPost, "/api/v1/tenants", admin, map[string]string{"name": "acme"}, nil)
	_, viewer := s.userWithRoleTenant(admin, "vera", "viewer", "acme")
	_, member := s.userWithRoleTenant(admin, "mia", "user", "acme")
	_, operator := s.userWithRole(admin, "olga", "operator")

	const secretURL = "https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=ROBOT-KEY-1"
	var ch struct {
		ID     int64             `json:"id"`
		Config map[string]string `json:"config"`
	}
	s.ok(http.StatusCreated, http.MethodPost, "/api/v1/alert-channels", admin, map[string]any{"name": "team", "type": "wecom",
		"tenant": "acme", "config": map[string]string{"url": secretURL}}, &ch)

	type channels struct {
		Items []struct {
			ID     int64             `json:"id"`
			Config map[string]string `json:"config"`
		} `json:"items"`
	}
	urlAs := func(cred string) string {
		t.Helper()
		var l channels
		s.ok(http.StatusOK, http.MethodGet, "/api/v1/alert-channels", cred, nil, &l)
		require.Len(t, l.Items, 1)
		return l.Items[0].Config["url"]
	}
	for name, cred := range map[string]string{"viewer": viewer, "member": member} {
		got := urlAs(cred)
		require.Equal(t, "https://qyapi.weixin.qq.com/******", got, name)
		require.False(t, strings.Contains(got, "ROBOT-KEY-1"), name)
	}
	require.Equal(t, secretURL, urlAs(admin))
	require.Equal(t, secretURL, urlAs(operator), "operators manage channels: they read the url whole")

	// An update that sends the masked url back keeps the stored one.
	s.ok(http.StatusOK, http.MethodPut, "/api/v1/alert-channels/"+strconv.FormatInt(ch.ID, 10), operator, map[string]any{"name": "team",
		"type": "wecom", "tenant": "acme", "config": map[string]string{"url": "https://qyapi.weixin.qq.com/******"}}, nil)
	require.Equal(t, secretURL, urlAs(admin))
}
