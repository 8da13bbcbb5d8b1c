package app

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/xuri/excelize/v2"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/metering"
)

// billingReport is the part of the report JSON the tests read.
type billingReport struct {
	Tenant   string `json:"tenant"`
	User     string `json:"user"`
	Period   string `json:"period"`
	From     string `json:"from"`
	Currency string `json:"currency"`
	Total    struct {
		Usage struct {
			SliceMS int64 `json:"slice_ms"`
		} `json:"usage"`
		Hours struct {
			DeviceHours float64 `json:"device_hours"`
		} `json:"hours"`
		Cost float64 `json:"cost"`
	} `json:"total"`
	ByTenant []struct {
		Tenant string `json:"tenant"`
	} `json:"by_tenant"`
	ByUser []struct {
		User string `json:"user"`
	} `json:"by_user"`
	TopTasks []struct {
		TaskID int64 `json:"task_id"`
	} `json:"top_tasks"`
}

// ranTask stores a task of owner in tenant that held one whole device for
// at least hold, and is released (failed) again.
func ranTask(t *testing.T, st metering.Store, owner int64, name, tenant string, hold time.Duration) *controlplane.Task {
	t.Helper()
	ctx := t.Context()
	tk := &controlplane.Task{OwnerID: owner, Owner: name, Spec: controlplane.TaskSpec{Name: "job-" + name, Command: []string{"/bin/true"},
		Tenant: tenant, Project: "p"}}
	require.NoError(t, st.CreateTask(ctx, tk))
	_, err := st.TransitionTask(ctx, controlplane.Transition{TaskID: tk.ID, From: controlplane.TaskSubmitted, To: controlplane.TaskQueued})
	require.NoError(t, err)
	node := "billing-node"
	_, err = st.BindTasks(ctx, []controlplane.Binding{{Transition: controlplane.Transition{TaskID: tk.ID,
		From: controlplane.TaskQueued, To: controlplane.TaskScheduled, NodeID: &node},
		Allocations: []*controlplane.Allocation{{NodeID: node, Vendor: "nvidia", Model: "H100", MemoryMiB: 81920,
			ComputeMilli: 1000, QoS: controlplane.QoSGold, PartStart: -1, Tenant: tenant, Project: "p"}}}})
	require.NoError(t, err)
	time.Sleep(hold)
	// The live scheduler may fail the task first (its node is unknown): the
	// interval is the same either way.
	_, err = st.TransitionTask(ctx, controlplane.Transition{TaskID: tk.ID, From: controlplane.TaskScheduled, To: controlplane.TaskFailed})
	if !errors.Is(err, controlplane.ErrConflict) {
		require.NoError(t, err)
	}
	_, err = st.ReleaseStale(ctx)
	require.NoError(t, err)
	return tk
}

func TestBillingAPI(t *testing.T) {
	s := startServer(t, t.TempDir())
	admin := s.adminToken()
	st := s.app.Server().Store().(metering.Store)
	today := time.Now().UTC().Format(controlplane.DateLayout)

	// The price book: bad entries are refused with 400 and change nothing.
	var price struct {
		ID       int64  `json:"id"`
		Currency string `json:"currency"`
	}
	s.ok(http.StatusCreated, http.MethodPost, "/api/v1/billing/prices", admin,
		map[string]any{"vendor": "nvidia", "effective_from": today, "device_hour": 3600000}, &price)
	require.Equal(t, "CNY", price.Currency)
	yesterday := time.Now().UTC().AddDate(0, 0, -1).Format(controlplane.DateLayout)
	for _, tc := range []struct {
		name string
		body map[string]any
	}{
		{"negative", map[string]any{"vendor": "amd", "effective_from": today, "device_hour": -1}},
		{"in the past", map[string]any{"vendor": "amd", "effective_from": yesterday, "device_hour": 1}},
		{"overlapping", map[string]any{"vendor": "nvidia", "effective_from": today, "device_hour": 1}},
		{"not a date", map[string]any{"vendor": "amd", "effective_from": "01/11/2026", "device_hour": 1}},
		{"unknown qos", map[string]any{"vendor": "amd", "qos": "platinum", "effective_from": today, "device_hour": 1}},
		{"other currency", map[string]any{"vendor": "amd", "effective_from": today, "device_hour": 1, "currency": "USD"}},
		{"end before start", map[string]any{"vendor": "amd", "effective_from": today, "effective_to": yesterday, "device_hour": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.fails(http.StatusBadRequest, "invalid_argument", http.MethodPost, "/api/v1/billing/prices", admin, tc.body)
		})
	}
	var prices struct {
		Items []map[string]any `json:"items"`
	}
	s.ok(http.StatusOK, http.MethodGet, "/api/v1/billing/prices", admin, nil, &prices)
	require.Len(t, prices.Items, 1, "refused entries left nothing behind")

	// Usage of two tenants.
	aliceID, alice := s.userWithRoleTenant(admin, "alice", "user", "acme")
	bobID, _ := s.userWithRoleTenant(admin, "bob", "user", "beta")
	_, acmeOp := s.userWithRoleTenant(admin, "acme-op", "operator", "acme")
	ranTask(t, st, aliceID, "alice", "acme", 30*time.Millisecond)
	ranTask(t, st, bobID, "bob", "beta", 30*time.Millisecond)

	var all billingReport
	s.ok(http.StatusOK, http.MethodGet, "/api/v1/billing/report?period=day", admin, nil, &all)
	require.Equal(t, today, all.From)
	require.Len(t, all.ByTenant, 2)
	require.Positive(t, all.Total.Usage.SliceMS)
	require.Positive(t, all.Total.Cost, "3,600,000 per device-hour: 1 per device-millisecond")

	var mine billingReport
	s.ok(http.StatusOK, http.MethodGet, "/api/v1/billing/report?period=day", alice, nil, &mine)
	require.Equal(t, "alice", mine.User, "a user sees their own usage")
	require.Len(t, mine.ByUser, 1)
	require.Equal(t, "alice", mine.ByUser[0].User)
	s.fails(http.StatusForbidden, "forbidden", http.MethodGet, "/api/v1/billing/report?user=bob", alice, nil)

	var acme billingReport
	s.ok(http.StatusOK, http.MethodGet, "/api/v1/billing/report?period=week", acmeOp, nil, &acme)
	require.Equal(t, "acme", acme.Tenant, "a tenant administrator sees their tenant")
	require.Len(t, acme.ByTenant, 1)
	s.fails(http.StatusForbidden, "forbidden", http.MethodGet, "/api/v1/billing/report?tenant=beta", acmeOp, nil)

	// A tenant admin (cluster role user) sees the tenant's usage, not another's.
	_, acmeAdmin := s.userWithRole(admin, "acme-admin", "user")
	s.ok(http.StatusOK, http.MethodPut, "/api/v1/tenants/acme/members/acme-admin", admin, map[string]string{"role": "tenant-admin"}, nil)
	var acmeByAdmin billingReport
	s.ok(http.StatusOK, http.MethodGet, "/api/v1/billing/report?period=week&tenant=acme", acmeAdmin, nil, &acmeByAdmin)
	require.Equal(t, "acme", acmeByAdmin.Tenant)
	require.Len(t, acmeByAdmin.ByUser, 1)
	require.Equal(t, "alice", acmeByAdmin.ByUser[0].User, "the tenant's members' usage")
	s.fails(http.StatusForbidden, "tenant_forbidden", http.MethodGet, "/api/v1/billing/report?tenant=beta", acmeAdmin, nil)
	s.fails(http.StatusForbidden, "tenant_forbidden", http.MethodGet, "/api/v1/billing/report?tenant=beta", alice, nil)

	for _, tc := range []struct {
		query  string
		status int
		code   string
	}{
		{"tenant=nobody", 404, "not_found"},
		{"start=2099-01-01&period=day", 400, "invalid_argument"},
		{"month=2099-01", 400, "invalid_argument"},
		{"month=2026-13", 400, "invalid_argument"},
		{"period=year", 400, "invalid_argument"},
		{"user=nobody", 404, "not_found"},
	} {
		t.Run(tc.query, func(t *testing.T) {
			s.fails(tc.status, tc.code, http.MethodGet, "/api/v1/billing/report?"+tc.query, admin, nil)
		})
	}

	// Exports.
	res := s.do(http.MethodGet, "/api/v1/billing/report/export?period=day&format=csv", admin, nil)
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	rows, err := csv.NewReader(bytes.NewReader(res.Body)).ReadAll()
	require.NoError(t, err)
	require.Equal(t, "section", rows[0][0])
	sections := map[string]int{}
	for _, r := range rows[1:] {
		sections[r[0]]++
	}
	require.Equal(t, 1, sections["total"])
	require.Equal(t, 2, sections["by_tenant"])
	res = s.do(http.MethodGet, "/api/v1/billing/report/export?period=day&format=xlsx", admin, nil)
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	book, err := excelize.OpenReader(bytes.NewReader(res.Body))
	require.NoError(t, err)
	require.Contains(t, book.GetSheetList(), "by_vendor")
	vendorRows, err := book.GetRows("by_vendor")
	require.NoError(t, err)
	require.Equal(t, []string{"vendor", "model", "qos"}, vendorRows[0][:3])
	require.Equal(t, "nvidia", vendorRows[1][0])

	// Statements: only for ended months, only for known tenants.
	thisMonth := time.Now().UTC().Format("2006-01")
	s.fails(http.StatusBadRequest, "invalid_argument", http.MethodPost, "/api/v1/billing/statements", admin,
		map[string]any{"tenant": "acme", "month": thisMonth})
	lastMonth := time.Now().UTC().AddDate(0, -1, 0).Format("2006-01")
	s.fails(http.StatusNotFound, "not_found", http.MethodPost, "/api/v1/billing/statements", admin,
		map[string]any{"tenant": "nobody", "month": lastMonth})
	var closed struct {
		Tenant string  `json:"tenant"`
		Total  float64 `json:"total"`
	}
	s.ok(http.StatusCreated, http.MethodPost, "/api/v1/billing/statements", admin, map[string]any{"tenant": "acme", "month": lastMonth}, &closed)
	require.Equal(t, "acme", closed.Tenant)
	s.fails(http.StatusConflict, "conflict", http.MethodPost, "/api/v1/billing/statements", admin,
		map[string]any{"tenant": "acme", "month": lastMonth})
	var got struct {
		Month  string         `json:"month"`
		Report *billingReport `json:"report"`
	}
	s.ok(http.StatusOK, http.MethodGet, fmt.Sprintf("/api/v1/billing/statements/report?tenant=acme&month=%s", lastMonth), acmeOp, nil, &got)
	require.Equal(t, lastMonth, got.Month)
	require.NotNil(t, got.Report)
	s.fails(http.StatusForbidden, "forbidden", http.MethodGet,
		fmt.Sprintf("/api/v1/billing/statements/report?tenant=beta&month=%s", lastMonth), acmeOp, nil)

	// Budgets: acme has spent more than 0.5 (1 per device-millisecond);
	// with a hard stop its new tasks are refused, beta's are not.
	s.fails(http.StatusBadRequest, "invalid_argument", http.MethodPut, "/api/v1/billing/budgets", admin,
		map[string]any{"tenant": "acme", "amount": -1})
	s.fails(http.StatusBadRequest, "invalid_argument", http.MethodPut, "/api/v1/billing/budgets", admin,
		map[string]any{"tenant": "acme", "amount": 1, "hard_stop": "explode"})
	s.ok(http.StatusOK, http.MethodPut, "/api/v1/billing/budgets", admin,
		map[string]any{"tenant": "acme", "amount": 0.5, "hard_stop": "refuse"}, nil)
	var budgets struct {
		Items []struct {
			Tenant    string  `json:"tenant"`
			UsedRatio float64 `json:"used_ratio"`
		} `json:"items"`
	}
	s.ok(http.StatusOK, http.MethodGet, "/api/v1/billing/budgets", acmeOp, nil, &budgets)
	require.Len(t, budgets.Items, 1)
	require.GreaterOrEqual(t, budgets.Items[0].UsedRatio, 1.0)
	var refused struct {
		ID int64 `json:"id"`
	}
	s.ok(http.StatusCreated, http.MethodPost, "/api/v1/tasks", alice,
		map[string]any{"name": "over-budget", "command": []string{"/bin/true"}, "tenant": "acme"}, &refused)
	require.Eventually(t, func() bool {
		var tk struct {
			State string `json:"state"`
		}
		s.ok(http.StatusOK, http.MethodGet, fmt.Sprintf("/api/v1/tasks/%d", refused.ID), admin, nil, &tk)
		return tk.State == "failed"
	}, 10*time.Second, 50*time.Millisecond, "the hard stop refuses acme's new task")
	var events struct {
		Items []struct {
			Reason string `json:"reason"`
		} `json:"items"`
	}
	s.ok(http.StatusOK, http.MethodGet, fmt.Sprintf("/api/v1/tasks/%d/events", refused.ID), admin, nil, &events)
	require.Contains(t, events.Items[len(events.Items)-1].Reason, "monthly budget of acme is spent")

	// The price change and the statement are in the audit log.
	var audit struct {
		Items []struct {
			Action string `json:"action"`
		} `json:"items"`
	}
	s.ok(http.StatusOK, http.MethodGet, "/api/v1/audit?q=billing.", admin, nil, &audit)
	actions := map[string]bool{}
	for _, e := range audit.Items {
		actions[e.Action] = true
	}
	require.True(t, actions["billing.price.create"], "%v", actions)
	require.True(t, actions["billing.statement.close"], "%v", actions)
	require.True(t, actions["billing.budget.100"], "the crossing is audited: %v", actions)
}

// userWithRoleTenant creates username with role in tenant and logs it in.
func (s *testServer) userWithRoleTenant(admin, username, role, tenant string) (id int64, token string) {
	s.t.Helper()
	var u struct {
		ID int64 `json:"id"`
	}
	s.ok(http.StatusCreated, http.MethodPost, "/api/v1/users", admin,
		map[string]string{"username": username, "password": testPassword, "role": role, "tenant": tenant}, &u)
	tok, _ := s.login(username, testPassword)
	return u.ID, tok
}
