package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
)

func testAlertRules(t *testing.T, open FullOpener) {
	s := open(t)
	require.ErrorIs(t, s.CreateAlertRule(ctx(t), &controlplane.AlertRule{Name: "bad name", Expr: "up", Level: controlplane.AlertWarn}), controlplane.ErrInvalid)
	r := &controlplane.AlertRule{Tenant: "ml", Name: "HighQueue", Expr: `heteroflow_scheduler_queue_length > 10`,
		For: 5 * time.Minute, KeepFiringFor: time.Minute, Level: controlplane.AlertError, Enabled: true, CreatedBy: "alice",
		Labels: map[string]string{"team": Hostile[4]}, Annotations: map[string]string{"summary": Hostile[0]}}
	require.NoError(t, s.CreateAlertRule(ctx(t), r))
	require.NotZero(t, r.ID)
	require.ErrorIs(t, s.CreateAlertRule(ctx(t), &controlplane.AlertRule{Tenant: "ml", Name: "HighQueue", Expr: "up", Level: controlplane.AlertInfo}), controlplane.ErrConflict)
	other := &controlplane.AlertRule{Tenant: "web", Name: "HighQueue", Expr: "up == 0", Level: controlplane.AlertInfo}
	require.NoError(t, s.CreateAlertRule(ctx(t), other), "the same name in another tenant")

	got, err := s.GetAlertRule(ctx(t), r.ID)
	require.NoError(t, err)
	require.Equal(t, *r, *got)
	r.Enabled, r.Expr, r.Level = false, "heteroflow_scheduler_queue_length > 20", controlplane.AlertWarn
	require.NoError(t, s.UpdateAlertRule(ctx(t), r))
	got, err = s.GetAlertRule(ctx(t), r.ID)
	require.NoError(t, err)
	require.False(t, got.Enabled)
	require.Equal(t, r.Expr, got.Expr)
	list, err := s.ListAlertRules(ctx(t))
	require.NoError(t, err)
	require.Len(t, list, 2)
	require.NoError(t, s.DeleteAlertRule(ctx(t), other.ID))
	require.ErrorIs(t, s.DeleteAlertRule(ctx(t), other.ID), controlplane.ErrNotFound)
	_, err = s.GetAlertRule(ctx(t), other.ID)
	require.ErrorIs(t, err, controlplane.ErrNotFound)
}

func mkAlert(fp, rule, node string, level controlplane.AlertLevel, at time.Time) *controlplane.AlertInstance {
	return &controlplane.AlertInstance{Fingerprint: fp, Rule: rule, Node: node, Level: level, Tenant: "ml",
		Labels:      map[string]string{"alertname": rule, "host_name": node, "severity": string(level)},
		Annotations: map[string]string{"summary": Hostile[4]}, Value: 0.97, ActiveAt: at.Add(-time.Minute), FiredAt: at}
}

func testAlertInstances(t *testing.T, open FullOpener) {
	s := open(t)
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	ch := &controlplane.NotifyChannel{Name: "hook", Type: controlplane.ChannelWebhook, Enabled: true, Config: map[string]string{"url": "http://x"}}
	require.NoError(t, s.CreateChannel(ctx(t), ch))

	a, created, err := s.OpenAlert(ctx(t), mkAlert("fp1", "GPUHighLoad", "n1", controlplane.AlertWarn, at), []int64{ch.ID})
	require.NoError(t, err)
	require.True(t, created)
	require.Equal(t, controlplane.AlertActive, a.State)
	require.Equal(t, "n1", a.Node)
	require.Equal(t, Hostile[4], a.Annotations["summary"])
	require.True(t, a.FiredAt.Equal(at))

	// The same label set while open: the existing instance, nothing queued.
	again, created, err := s.OpenAlert(ctx(t), mkAlert("fp1", "GPUHighLoad", "n1", controlplane.AlertWarn, at.Add(time.Minute)), []int64{ch.ID})
	require.NoError(t, err)
	require.False(t, created)
	require.Equal(t, a.ID, again.ID)
	ns, total, err := s.ListNotifications(ctx(t), controlplane.NotificationFilter{AlertID: a.ID})
	require.NoError(t, err)
	require.Equal(t, 1, total)
	require.Equal(t, controlplane.NotifyFiring, ns[0].Kind)

	acked, err := s.AckAlert(ctx(t), a.ID, "alice", "looking", at.Add(2*time.Minute))
	require.NoError(t, err)
	require.Equal(t, controlplane.AlertAcknowledged, acked.State)
	require.Equal(t, "alice", acked.AckedBy)
	require.Equal(t, "looking", acked.AckComment)
	require.True(t, acked.AckedAt.Equal(at.Add(2*time.Minute)))
	_, err = s.AckAlert(ctx(t), a.ID, "bob", "", at)
	require.ErrorIs(t, err, controlplane.ErrConflict, "only an ACTIVE alert is acknowledged")
	_, err = s.AckAlert(ctx(t), 1<<40, "bob", "", at)
	require.ErrorIs(t, err, controlplane.ErrNotFound)

	// An acknowledged alert is still open: no second instance.
	_, created, err = s.OpenAlert(ctx(t), mkAlert("fp1", "GPUHighLoad", "n1", controlplane.AlertWarn, at), nil)
	require.NoError(t, err)
	require.False(t, created)

	res, err := s.ResolveAlert(ctx(t), a.ID, "", "condition cleared", at.Add(5*time.Minute), []int64{ch.ID})
	require.NoError(t, err)
	require.Equal(t, controlplane.AlertResolved, res.State)
	require.Equal(t, "condition cleared", res.Resolution)
	_, err = s.ResolveAlert(ctx(t), a.ID, "bob", "again", at, nil)
	require.ErrorIs(t, err, controlplane.ErrConflict)
	_, err = s.AckAlert(ctx(t), a.ID, "bob", "", at)
	require.ErrorIs(t, err, controlplane.ErrConflict)

	// Firing again opens a new instance.
	b, created, err := s.OpenAlert(ctx(t), mkAlert("fp1", "GPUHighLoad", "n1", controlplane.AlertWarn, at.Add(10*time.Minute)), nil)
	require.NoError(t, err)
	require.True(t, created)
	require.NotEqual(t, a.ID, b.ID)
	manual, err := s.ResolveAlert(ctx(t), b.ID, "bob", "false positive", at.Add(11*time.Minute), nil)
	require.NoError(t, err)
	require.Equal(t, "bob", manual.ResolvedBy)

	events, err := s.ListAlertEvents(ctx(t), a.ID)
	require.NoError(t, err)
	require.Len(t, events, 3)
	require.Equal(t, []controlplane.AlertState{controlplane.AlertActive, controlplane.AlertAcknowledged, controlplane.AlertResolved},
		[]controlplane.AlertState{events[0].State, events[1].State, events[2].State})
	require.Equal(t, "alice", events[1].Actor)
	require.Equal(t, "system", events[2].Actor)

	_, _, err = s.OpenAlert(ctx(t), mkAlert("fp2", "NodeOffline", "n2", controlplane.AlertError, at.Add(time.Hour)), nil)
	require.NoError(t, err)
	list, total, err := s.ListAlerts(ctx(t), controlplane.AlertFilter{})
	require.NoError(t, err)
	require.Equal(t, 3, total)
	require.Equal(t, "NodeOffline", list[0].Rule, "newest first")
	cases := []struct {
		name string
		f    controlplane.AlertFilter
		want int
	}{
		{"open", controlplane.AlertFilter{States: []controlplane.AlertState{controlplane.AlertActive, controlplane.AlertAcknowledged}}, 1},
		{"resolved", controlplane.AlertFilter{States: []controlplane.AlertState{controlplane.AlertResolved}}, 2},
		{"level", controlplane.AlertFilter{Levels: []controlplane.AlertLevel{controlplane.AlertWarn}}, 2},
		{"rule", controlplane.AlertFilter{Rule: "NodeOffline"}, 1},
		{"node", controlplane.AlertFilter{Node: "n1"}, 2},
		{"tenant", controlplane.AlertFilter{Tenant: new("ml")}, 3},
		{"other tenant", controlplane.AlertFilter{Tenant: new("")}, 0},
		{"since", controlplane.AlertFilter{Since: new(at.Add(time.Minute))}, 2},
		{"until", controlplane.AlertFilter{Until: new(at.Add(time.Minute))}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, n, err := s.ListAlerts(ctx(t), c.f)
			require.NoError(t, err)
			require.Equal(t, c.want, n)
		})
	}
	_, _, err = s.ListAlerts(ctx(t), controlplane.AlertFilter{States: []controlplane.AlertState{"BOGUS"}})
	require.ErrorIs(t, err, controlplane.ErrInvalid)

	t.Run("Scope", func(t *testing.T) {
		// A platform-wide alert on n1 and one of another tenant on n1:
		// a scope sees its tenants' alerts and platform-wide ones of its
		// nodes, never another tenant's, whatever node they name.
		pw := mkAlert("fp-pw", "NodeOffline", "n1", controlplane.AlertError, at.Add(2*time.Hour))
		pw.Tenant = ""
		other := mkAlert("fp-other", "TaskFailed", "n1", controlplane.AlertError, at.Add(2*time.Hour))
		other.Tenant = "other"
		for _, a := range []*controlplane.AlertInstance{pw, other} {
			_, _, err := s.OpenAlert(ctx(t), a, nil)
			require.NoError(t, err)
		}
		for _, c := range []struct {
			name  string
			scope controlplane.AlertScope
			want  int
		}{
			{"tenant", controlplane.AlertScope{Tenants: []string{"ml"}}, 3},
			{"tenant and its node", controlplane.AlertScope{Tenants: []string{"ml"}, Nodes: []string{"n1"}}, 4},
			{"another node", controlplane.AlertScope{Tenants: []string{"ml"}, Nodes: []string{"n2"}}, 3},
			{"other tenant", controlplane.AlertScope{Tenants: []string{"other"}}, 1},
			{"nothing", controlplane.AlertScope{}, 0},
		} {
			sc := c.scope
			list, n, err := s.ListAlerts(ctx(t), controlplane.AlertFilter{Scope: &sc})
			require.NoError(t, err, c.name)
			require.Equal(t, c.want, n, c.name)
			for _, a := range list {
				require.True(t, sc.Sees(a), "%s: %+v", c.name, a)
			}
			st, err := s.AlertStats(ctx(t), controlplane.AlertFilter{Scope: &sc})
			require.NoError(t, err)
			require.Equal(t, c.want, st.Total, c.name)
		}
	})

	t.Run("RaceOpen", func(t *testing.T) {
		var wg sync.WaitGroup
		var mu sync.Mutex
		n := 0
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, c, err := s.OpenAlert(ctx(t), mkAlert("race", "R", "n", controlplane.AlertInfo, at), nil)
				require.NoError(t, err)
				if c {
					mu.Lock()
					n++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		require.Equal(t, 1, n, "one open instance per fingerprint")
	})
}

func testAlertStats(t *testing.T, open FullOpener) {
	s := open(t)
	day := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	for i, c := range []struct {
		rule, node string
		level      controlplane.AlertLevel
		at         time.Time
	}{
		{"GPUHighLoad", "n1", controlplane.AlertWarn, day},
		{"GPUHighLoad", "n2", controlplane.AlertError, day.Add(time.Hour)},
		{"NodeOffline", "n1", controlplane.AlertError, day.Add(24 * time.Hour)},
	} {
		a, _, err := s.OpenAlert(ctx(t), mkAlert(fmt.Sprint("fp", i), c.rule, c.node, c.level, c.at), nil)
		require.NoError(t, err)
		if i == 0 {
			_, err = s.AckAlert(ctx(t), a.ID, "alice", "", c.at.Add(60*time.Second))
			require.NoError(t, err)
			_, err = s.ResolveAlert(ctx(t), a.ID, "", "", c.at.Add(300*time.Second), nil)
			require.NoError(t, err)
		}
	}
	st, err := s.AlertStats(ctx(t), controlplane.AlertFilter{Since: new(day.Add(-time.Hour)), Until: new(day.Add(48 * time.Hour))})
	require.NoError(t, err)
	require.Equal(t, 3, st.Total)
	require.Equal(t, 2, st.Open)
	require.Equal(t, map[string]int{"WARN": 1, "ERROR": 2}, st.ByLevel)
	require.Equal(t, map[string]int{"GPUHighLoad": 2, "NodeOffline": 1}, st.ByRule)
	require.Equal(t, map[string]int{"n1": 2, "n2": 1}, st.ByNode)
	require.Equal(t, []controlplane.DayCount{{Day: "2026-03-01", Count: 2}, {Day: "2026-03-02", Count: 1}}, st.ByDay)
	require.InDelta(t, 60, st.MeanAckSeconds, 0.001)
	require.InDelta(t, 300, st.MeanResolveSeconds, 0.001)
	st, err = s.AlertStats(ctx(t), controlplane.AlertFilter{Since: new(day.Add(12 * time.Hour)), Until: new(day.Add(48 * time.Hour))})
	require.NoError(t, err)
	require.Equal(t, 1, st.Total, "window")
}

func testSilences(t *testing.T, open FullOpener) {
	s := open(t)
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	require.ErrorIs(t, s.CreateSilence(ctx(t), &controlplane.Silence{StartsAt: now, EndsAt: now.Add(time.Hour)}), controlplane.ErrInvalid)
	require.ErrorIs(t, s.CreateSilence(ctx(t), &controlplane.Silence{Matchers: []controlplane.LabelMatcher{{Name: "a", Op: "=~", Value: "("}},
		StartsAt: now, EndsAt: now.Add(time.Hour)}), controlplane.ErrInvalid)
	sil := &controlplane.Silence{Matchers: []controlplane.LabelMatcher{{Name: "host_name", Op: controlplane.MatchRegexp, Value: "n[12]"},
		{Name: "alertname", Op: controlplane.MatchEqual, Value: "GPUHighLoad"}}, StartsAt: now, EndsAt: now.Add(time.Hour),
		Comment: Hostile[1], CreatedBy: "alice"}
	require.NoError(t, s.CreateSilence(ctx(t), sil))
	list, err := s.ListSilences(ctx(t))
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, *sil, *list[0])
	lbl := map[string]string{"host_name": "n1", "alertname": "GPUHighLoad"}
	require.True(t, list[0].Active(lbl, now.Add(time.Minute)))
	require.False(t, list[0].Active(map[string]string{"host_name": "n3", "alertname": "GPUHighLoad"}, now.Add(time.Minute)))
	require.False(t, list[0].Active(lbl, now.Add(2*time.Hour)))
	require.NoError(t, s.ExpireSilence(ctx(t), sil.ID, now.Add(10*time.Minute)))
	list, err = s.ListSilences(ctx(t))
	require.NoError(t, err)
	require.True(t, list[0].EndsAt.Equal(now.Add(10*time.Minute)))
	require.False(t, list[0].Active(lbl, now.Add(20*time.Minute)))
	require.ErrorIs(t, s.ExpireSilence(ctx(t), 1<<40, now), controlplane.ErrNotFound)
}

func testChannelsOutbox(t *testing.T, open FullOpener) {
	s := open(t)
	require.ErrorIs(t, s.CreateChannel(ctx(t), &controlplane.NotifyChannel{Name: "x", Type: "pager"}), controlplane.ErrInvalid)
	c := &controlplane.NotifyChannel{Name: "ops", Type: controlplane.ChannelDingTalk, Enabled: true, SendResolved: true,
		Config: map[string]string{"url": "https://oapi.dingtalk.com/robot/send?access_token=x", "secret": "SEC"},
		Levels: []controlplane.AlertLevel{controlplane.AlertError}, Tenant: "ml"}
	require.NoError(t, s.CreateChannel(ctx(t), c))
	require.ErrorIs(t, s.CreateChannel(ctx(t), &controlplane.NotifyChannel{Name: "ops", Type: controlplane.ChannelWebhook}), controlplane.ErrConflict)
	got, err := s.GetChannel(ctx(t), c.ID)
	require.NoError(t, err)
	require.Equal(t, *c, *got)
	c.Levels = nil
	require.NoError(t, s.UpdateChannel(ctx(t), c))
	got, err = s.GetChannel(ctx(t), c.ID)
	require.NoError(t, err)
	require.Empty(t, got.Levels)
	list, err := s.ListChannels(ctx(t))
	require.NoError(t, err)
	require.Len(t, list, 1)

	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	a, _, err := s.OpenAlert(ctx(t), mkAlert("fp", "GPUHighLoad", "n1", controlplane.AlertError, at), []int64{c.ID})
	require.NoError(t, err)
	due, err := s.DueNotifications(ctx(t), time.Now().Add(time.Minute), 10)
	require.NoError(t, err)
	require.Len(t, due, 1)
	n := due[0]
	require.Equal(t, a.ID, n.AlertID)
	require.Equal(t, controlplane.DeliveryPending, n.Status)

	retry := time.Now().Add(time.Hour)
	require.NoError(t, s.MarkNotification(ctx(t), n.ID, false, "connection refused", retry, false, time.Now()))
	due, err = s.DueNotifications(ctx(t), time.Now().Add(time.Minute), 10)
	require.NoError(t, err)
	require.Empty(t, due, "not due before the backoff ends")
	due, err = s.DueNotifications(ctx(t), retry, 10)
	require.NoError(t, err)
	require.Len(t, due, 1)
	require.Equal(t, 1, due[0].Attempts)
	require.Equal(t, "connection refused", due[0].LastError)
	require.NoError(t, s.MarkNotification(ctx(t), n.ID, true, "", retry, false, retry))
	due, err = s.DueNotifications(ctx(t), retry.Add(time.Hour), 10)
	require.NoError(t, err)
	require.Empty(t, due)
	ns, total, err := s.ListNotifications(ctx(t), controlplane.NotificationFilter{ChannelID: c.ID, Status: controlplane.DeliveryDelivered})
	require.NoError(t, err)
	require.Equal(t, 1, total)
	require.NotNil(t, ns[0].DeliveredAt)

	extra := &controlplane.Notification{ChannelID: c.ID, AlertID: a.ID, Kind: controlplane.NotifyResolved}
	require.NoError(t, s.EnqueueNotification(ctx(t), extra))
	require.NoError(t, s.MarkNotification(ctx(t), extra.ID, false, "HTTP 500", retry, true, retry))
	ns, _, err = s.ListNotifications(ctx(t), controlplane.NotificationFilter{Status: controlplane.DeliveryFailed})
	require.NoError(t, err)
	require.Len(t, ns, 1)
	require.Equal(t, "HTTP 500", ns[0].LastError)

	require.NoError(t, s.DeleteChannel(ctx(t), c.ID))
	require.ErrorIs(t, s.DeleteChannel(ctx(t), c.ID), controlplane.ErrNotFound)
	_, total, err = s.ListNotifications(ctx(t), controlplane.NotificationFilter{})
	require.NoError(t, err)
	require.Zero(t, total, "a deleted channel's outbox goes with it")
}
