package alertapi

import (
	"context"
	"fmt"
	"time"

	"github.com/heteroflow/heteroflow/alerts/notify"
	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/httpapi"
)

type silencesOut struct {
	Items []SilenceJSON `json:"items"`
}

func (h *Handlers) listSilences(ctx context.Context, _ *struct{}) (*httpapi.Body[silencesOut], error) {
	list, err := h.store.ListSilences(ctx)
	if err != nil {
		return nil, err
	}
	v, err := h.visibility(ctx)
	if err != nil {
		return nil, err
	}
	now := h.now()
	out := silencesOut{Items: []SilenceJSON{}}
	for _, s := range list {
		if !tenantVisible(v, s.Tenant) {
			continue
		}
		out.Items = append(out.Items, silenceJSON(s, now))
	}
	return &httpapi.Body[silencesOut]{Body: out}, nil
}

type createSilenceIn struct {
	Body struct {
		Matchers []controlplane.LabelMatcher `json:"matchers" minItems:"1" maxItems:"32"`
		StartsAt *time.Time                  `json:"starts_at,omitempty" doc:"Default now"`
		EndsAt   time.Time                   `json:"ends_at"`
		Comment  string                      `json:"comment,omitempty" maxLength:"1024"`
		Tenant   string                      `json:"tenant,omitempty" maxLength:"128"`
	}
}

func (h *Handlers) createSilence(ctx context.Context, in *createSilenceIn) (*httpapi.Body[SilenceJSON], error) {
	httpapi.SetAudit(ctx, "silence.create", "silence")
	s := &controlplane.Silence{Matchers: in.Body.Matchers, StartsAt: h.now(), EndsAt: in.Body.EndsAt, Comment: in.Body.Comment,
		Tenant: in.Body.Tenant, CreatedBy: httpapi.PrincipalFrom(ctx).Actor()}
	if in.Body.StartsAt != nil {
		s.StartsAt = *in.Body.StartsAt
	}
	if err := h.store.CreateSilence(ctx, s); err != nil {
		return nil, err
	}
	httpapi.SetAudit(ctx, "silence.create", fmt.Sprintf("silence/%d", s.ID))
	return &httpapi.Body[SilenceJSON]{Body: silenceJSON(s, h.now())}, nil
}

func (h *Handlers) expireSilence(ctx context.Context, in *idIn) (*struct{}, error) {
	httpapi.SetAudit(ctx, "silence.expire", fmt.Sprintf("silence/%d", in.ID))
	return nil, h.store.ExpireSilence(ctx, in.ID, h.now())
}

// ---- channels ----

type channelsOut struct {
	Items []ChannelJSON `json:"items"`
}

func (h *Handlers) listChannels(ctx context.Context, _ *struct{}) (*httpapi.Body[channelsOut], error) {
	list, err := h.store.ListChannels(ctx)
	if err != nil {
		return nil, err
	}
	v, err := h.visibility(ctx)
	if err != nil {
		return nil, err
	}
	out := channelsOut{Items: []ChannelJSON{}}
	for _, c := range list {
		if !tenantVisible(v, c.Tenant) {
			continue
		}
		out.Items = append(out.Items, channelJSON(c, v.All))
	}
	return &httpapi.Body[channelsOut]{Body: out}, nil
}

type channelIn struct {
	Body ChannelSpecJSON
}

func channelFrom(spec ChannelSpecJSON, prev *controlplane.NotifyChannel) (*controlplane.NotifyChannel, error) {
	c := &controlplane.NotifyChannel{Name: spec.Name, Type: spec.Type, Config: map[string]string{}, Tenant: spec.Tenant,
		Enabled: true, SendResolved: true}
	for k, v := range spec.Config {
		switch {
		case prev == nil:
		case v == masked:
			v = prev.Config[k] // the client sent back the mask: keep the secret
		case k == urlKey && v != prev.Config[k] && v == maskURL(prev.Config[k]):
			v = prev.Config[k] // the masked url as listed: keep the stored one
		}
		c.Config[k] = v
	}
	for _, l := range spec.Levels {
		c.Levels = append(c.Levels, controlplane.AlertLevel(l))
	}
	if spec.Enabled != nil {
		c.Enabled = *spec.Enabled
	}
	if spec.SendResolved != nil {
		c.SendResolved = *spec.SendResolved
	}
	return c, notify.CheckConfig(c)
}

func (h *Handlers) createChannel(ctx context.Context, in *channelIn) (*httpapi.Body[ChannelJSON], error) {
	httpapi.SetAudit(ctx, "alert-channel.create", "alert-channel/"+in.Body.Name)
	c, err := channelFrom(in.Body, nil)
	if err != nil {
		return nil, err
	}
	if err := h.store.CreateChannel(ctx, c); err != nil {
		return nil, err
	}
	httpapi.SetAudit(ctx, "alert-channel.create", fmt.Sprintf("alert-channel/%d", c.ID))
	return &httpapi.Body[ChannelJSON]{Body: channelJSON(c, true)}, nil
}

type updateChannelIn struct {
	ID   int64 `path:"id" minimum:"1"`
	Body ChannelSpecJSON
}

func (h *Handlers) updateChannel(ctx context.Context, in *updateChannelIn) (*httpapi.Body[ChannelJSON], error) {
	httpapi.SetAudit(ctx, "alert-channel.update", fmt.Sprintf("alert-channel/%d", in.ID))
	prev, err := h.store.GetChannel(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	c, err := channelFrom(in.Body, prev)
	if err != nil {
		return nil, err
	}
	c.ID, c.CreatedAt = prev.ID, prev.CreatedAt
	if err := h.store.UpdateChannel(ctx, c); err != nil {
		return nil, err
	}
	return &httpapi.Body[ChannelJSON]{Body: channelJSON(c, true)}, nil
}

func (h *Handlers) deleteChannel(ctx context.Context, in *idIn) (*struct{}, error) {
	httpapi.SetAudit(ctx, "alert-channel.delete", fmt.Sprintf("alert-channel/%d", in.ID))
	return nil, h.store.DeleteChannel(ctx, in.ID)
}

type testChannelOut struct {
	Delivered bool `json:"delivered"`
}

func (h *Handlers) testChannel(ctx context.Context, in *idIn) (*httpapi.Body[testChannelOut], error) {
	httpapi.SetAudit(ctx, "alert-channel.test", fmt.Sprintf("alert-channel/%d", in.ID))
	c, err := h.store.GetChannel(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	if err := h.worker.SendTest(ctx, c); err != nil {
		return nil, controlplane.InvalidCode(codeChannelTestFailed, []string{"detail", err.Error()}, "the receiver did not accept the test notification: %v", err)
	}
	return &httpapi.Body[testChannelOut]{Body: testChannelOut{Delivered: true}}, nil
}

type listNotificationsIn struct {
	httpapi.PageParams
	AlertID   int64  `query:"alert_id" minimum:"0"`
	ChannelID int64  `query:"channel_id" minimum:"0"`
	Status    string `query:"status" enum:"pending,delivered,failed," doc:"pending, delivered or failed"`
}

func (h *Handlers) listNotifications(ctx context.Context, in *listNotificationsIn) (*httpapi.Body[*httpapi.List[NotificationJSON]], error) {
	p := controlplane.Page{Limit: in.Limit, Offset: in.Offset}.Normalize()
	empty := &httpapi.Body[*httpapi.List[NotificationJSON]]{Body: &httpapi.List[NotificationJSON]{Items: []NotificationJSON{}, Limit: p.Limit, Offset: p.Offset}}
	if ok, err := h.notificationsVisible(ctx, in); err != nil || !ok {
		return empty, err
	}
	rows, total, err := h.store.ListNotifications(ctx, controlplane.NotificationFilter{AlertID: in.AlertID, ChannelID: in.ChannelID,
		Status: in.Status, Page: p})
	if err != nil {
		return nil, err
	}
	items := make([]NotificationJSON, len(rows))
	for i, n := range rows {
		items[i] = notificationJSON(n)
	}
	return &httpapi.Body[*httpapi.List[NotificationJSON]]{Body: &httpapi.List[NotificationJSON]{Items: items, Total: total, Limit: p.Limit, Offset: p.Offset}}, nil
}

// notificationsVisible: callers below operator list the deliveries of one
// alert or one channel they see, never the whole cluster's.
func (h *Handlers) notificationsVisible(ctx context.Context, in *listNotificationsIn) (bool, error) {
	v, err := h.visibility(ctx)
	if err != nil || v.All {
		return v.All, err
	}
	if in.AlertID > 0 {
		if _, err := h.visibleAlert(ctx, in.AlertID); err != nil {
			return false, nil
		}
		return true, nil
	}
	if in.ChannelID > 0 {
		c, err := h.store.GetChannel(ctx, in.ChannelID)
		return err == nil && tenantVisible(v, c.Tenant), nil
	}
	return false, nil
}
