package app

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane/apitypes"
)

// TestHubTenancy: the hub talks to members with its own admin key, so
// the member admits whatever tenant a task names and answers any query;
// the hub therefore admits the tenant itself, as POST /tasks does (a
// member of acme cannot run a task on globex's quota through the hub, a
// user in no tenant cannot name one, a task without a tenant runs in the
// submitter's), a tenant-scoped key sees its tenant's forwarded tasks only,
// and the hub narrows cross-cluster PromQL to the caller's tenants.
func TestHubTenancy(t *testing.T) {
	east := startMember(t, "1.4.0")
	hub := startHub(t)
	admin := hub.adminToken()
	for _, s := range []struct {
		s     *testServer
		admin string
	}{{hub, admin}, {east.s, east.admin}} {
		for _, name := range []string{"acme", "globex"} {
			s.s.ok(http.StatusCreated, http.MethodPost, "/api/v1/tenants", s.admin, map[string]string{"name": name}, nil)
		}
	}
	hub.ok(http.StatusCreated, http.MethodPost, "/api/v1/clusters", admin,
		map[string]string{"name": "east", "url": east.s.base, "api_key": east.key}, nil)
	_, mallory := hub.userWithRoleTenant(admin, "mallory", "user", "acme")
	_, loner := hub.userWithRole(admin, "loner", "user")

	task := func(tenant string) map[string]any {
		spec := map[string]any{"name": "hub-" + tenant, "command": []string{"true"}, "device_count": 1, "compute_percent": 100}
		if tenant != "" {
			spec["tenant"] = tenant
		}
		return map[string]any{"cluster": "east", "task": spec}
	}
	hub.fails(http.StatusForbidden, "tenant_forbidden", http.MethodPost, "/api/v1/hub/tasks", mallory, task("globex"))
	hub.fails(http.StatusForbidden, "tenant_forbidden", http.MethodPost, "/api/v1/hub/tasks", loner, task("acme"))
	hub.fails(http.StatusBadRequest, "tenant_not_found", http.MethodPost, "/api/v1/hub/tasks", mallory, task("initech"))
	// The member would take any label from the hub's admin key: the hub
	// refuses the reserved ones itself.
	labelled := task("")
	labelled["task"].(map[string]any)["labels"] = map[string]string{"heteroflow.workflow": "1"}
	hub.fails(http.StatusBadRequest, "label_reserved", http.MethodPost, "/api/v1/hub/tasks", mallory, labelled)
	var onEast apitypes.List[apitypes.TaskJSON]
	east.s.ok(http.StatusOK, http.MethodGet, "/api/v1/tasks?limit=100", east.admin, nil, &onEast)
	require.Zero(t, onEast.Total, "nothing was forwarded: %+v", onEast.Items)

	var ht apitypes.HubTaskJSON
	hub.ok(http.StatusCreated, http.MethodPost, "/api/v1/hub/tasks", mallory, task(""), &ht)
	var got apitypes.TaskJSON
	east.s.ok(http.StatusOK, http.MethodGet, fmt.Sprintf("/api/v1/tasks/%d", ht.MemberTaskID), east.admin, nil, &got)
	require.Equal(t, "acme", got.Tenant, "a task without a tenant runs in the submitter's")
	var inGlobex apitypes.HubTaskJSON
	hub.ok(http.StatusCreated, http.MethodPost, "/api/v1/hub/tasks", admin, task("globex"), &inGlobex)

	// A key scoped to acme acts in acme only: its owner's forwarded tasks
	// in globex are not listed and not found through it.
	var acmeKey struct {
		Key string `json:"key"`
	}
	hub.ok(http.StatusOK, http.MethodPut, "/api/v1/tenants/acme/members/admin", admin, map[string]string{"role": "member"}, nil)
	hub.ok(http.StatusCreated, http.MethodPost, "/api/v1/tenants/acme/apikeys", admin, map[string]string{"name": "acme-ci"}, &acmeKey)
	var listed apitypes.List[apitypes.HubTaskJSON]
	hub.ok(http.StatusOK, http.MethodGet, "/api/v1/hub/tasks", acmeKey.Key, nil, &listed)
	for _, it := range listed.Items {
		require.NotEqual(t, inGlobex.ID, it.ID, "a globex task listed through an acme key")
	}
	hub.fails(http.StatusNotFound, "not_found", http.MethodGet, fmt.Sprintf("/api/v1/hub/tasks/%d", inGlobex.ID), acmeKey.Key, nil)
	hub.fails(http.StatusNotFound, "not_found", http.MethodPost, fmt.Sprintf("/api/v1/hub/tasks/%d/cancel", inGlobex.ID), acmeKey.Key, nil)
	hub.ok(http.StatusOK, http.MethodGet, fmt.Sprintf("/api/v1/hub/tasks/%d", inGlobex.ID), admin, nil, nil)

	// Cross-cluster PromQL: the hub narrows the query to the caller's
	// tenants before the member (which sees the hub's admin key) runs it.
	now := time.Now()
	app := east.s.app.Server().Metrics().Appendable().AppenderV2(context.Background())
	for _, tenant := range []string{"acme", "globex"} {
		_, err := app.Append(0, labels.FromStrings("__name__", "heteroflow_hub_probe", "tenant", tenant), 0, now.UnixMilli(), 1, nil, nil, storage.AOptions{})
		require.NoError(t, err)
	}
	require.NoError(t, app.Commit())
	for _, q := range []string{`heteroflow_hub_probe`, `{__name__=~"heteroflow_hub_.+",tenant=~".+"}`, `count by (tenant) ({tenant="globex"} or heteroflow_hub_probe)`} {
		r := hub.do(http.MethodGet, "/prometheus/api/v1/query?"+url.Values{"query": {q}, "time": {fmt.Sprint(now.Unix() + 1)}}.Encode(), mallory, nil)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		require.Contains(t, string(r.Body), `"cluster":"east"`, q)
		require.Contains(t, string(r.Body), `"tenant":"acme"`, q)
		require.NotContains(t, string(r.Body), "globex", q)
	}
	r := hub.do(http.MethodGet, "/prometheus/api/v1/query?"+url.Values{"query": {`heteroflow_hub_probe`}, "time": {fmt.Sprint(now.Unix() + 1)}}.Encode(), admin, nil)
	require.Contains(t, string(r.Body), "globex", "the hub's admins see every tenant")
}
