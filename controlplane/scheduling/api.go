package scheduling

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/auth"
	"github.com/heteroflow/heteroflow/controlplane/httpapi"
)

// Mount registers the scheduling routes (see docs/api-contract.md,
// "Scheduling").
func (s *Service) Mount(api *httpapi.API) {
	p := httpapi.Prefix
	api.Handle(http.MethodGet, p+"/plugins", httpapi.Perm(auth.ResPlugins, auth.ActRead), http.HandlerFunc(s.listPlugins))
	api.Handle(http.MethodPatch, p+"/plugins/{name}", httpapi.Perm(auth.ResPlugins, auth.ActWrite), http.HandlerFunc(s.patchPlugin))
	api.Handle(http.MethodPut, p+"/plugins/order", httpapi.Perm(auth.ResPlugins, auth.ActWrite), http.HandlerFunc(s.putOrder))

	api.Handle(http.MethodGet, p+"/quotas", httpapi.Perm(auth.ResQuotas, auth.ActRead), http.HandlerFunc(s.listQuotas))
	api.Handle(http.MethodPost, p+"/quotas", httpapi.Perm(auth.ResQuotas, auth.ActWrite), http.HandlerFunc(s.createQuota))
	api.Handle(http.MethodGet, p+"/quotas/{id}", httpapi.Perm(auth.ResQuotas, auth.ActRead), http.HandlerFunc(s.getQuota))
	api.Handle(http.MethodPut, p+"/quotas/{id}", httpapi.Perm(auth.ResQuotas, auth.ActWrite), http.HandlerFunc(s.putQuota))
	api.Handle(http.MethodDelete, p+"/quotas/{id}", httpapi.Perm(auth.ResQuotas, auth.ActDelete), http.HandlerFunc(s.deleteQuota))

	api.Handle(http.MethodGet, p+"/tasks/{id}/why", httpapi.Perm(auth.ResTasks, auth.ActRead), http.HandlerFunc(s.why))
	api.Handle(http.MethodGet, p+"/scheduler/summary", httpapi.Perm(auth.ResNodes, auth.ActRead), http.HandlerFunc(s.summary))
	api.Handle(http.MethodGet, p+"/slices", httpapi.Perm(auth.ResNodes, auth.ActRead), http.HandlerFunc(s.slices))
	api.Handle(http.MethodGet, p+"/scheduler/defrag", httpapi.Perm(auth.ResNodes, auth.ActRead), http.HandlerFunc(s.defragPlan))
	api.Handle(http.MethodPost, p+"/scheduler/defrag", httpapi.Perm(auth.ResPlugins, auth.ActWrite), http.HandlerFunc(s.defragExecute))
	document(api)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// decode reads a JSON body strictly (unknown fields are an error).
func decode(r *http.Request, into any) error {
	dec := json.NewDecoder(io.LimitReader(r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		return controlplane.Invalidf("request body: %v", err)
	}
	return nil
}

func pathID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, controlplane.Invalidf("id must be a positive integer")
	}
	return id, nil
}

func (s *Service) fail(w http.ResponseWriter, r *http.Request, err error) {
	httpapi.WriteError(w, r, s.log, err)
}

// ---- plugins ----

func (s *Service) pluginList(r *http.Request) ([]pluginState, error) {
	stored, err := s.store.ListPluginSettings(r.Context())
	if err != nil {
		return nil, err
	}
	cur := currentSettings(s.cfg.Profile, stored)
	reg := registry(nil, s.extra)
	out := make([]pluginState, len(cur))
	for i, c := range cur {
		out[i] = pluginState{Name: c.Name, Enabled: c.Enabled, Weight: c.Weight, Position: i, Assign: c.Name == s.cfg.Profile.Assign,
			Points: extensionPoints(reg, c.Name)}
	}
	return out, nil
}

func (s *Service) listPlugins(w http.ResponseWriter, r *http.Request) {
	out, err := s.pluginList(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, pluginList{Items: out, Profile: s.cfg.Profile.Name})
}

type pluginPatch struct {
	Enabled *bool    `json:"enabled"`
	Weight  *float64 `json:"weight"`
}

// saveSettings persists settings and, on the leader, applies them at once.
func (s *Service) saveSettings(r *http.Request, next []controlplane.PluginSetting) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fw != nil {
		if err := s.applySettingsLocked(next); err != nil {
			return err
		}
	} else if _, err := s.buildFramework(mustSnapshot(s.cfg.BronzeOvercommit), next); err != nil {
		return controlplane.Invalidf("%v", err) // followers validate by building
	}
	return s.store.PutPluginSettings(r.Context(), next)
}

// decodeWithSettings decodes a plugin-settings change and returns the
// effective settings it applies to (stored settings over the profile).
func (s *Service) decodeWithSettings(r *http.Request, body any) ([]controlplane.PluginSetting, error) {
	if err := decode(r, body); err != nil {
		return nil, err
	}
	stored, err := s.store.ListPluginSettings(r.Context())
	if err != nil {
		return nil, err
	}
	return currentSettings(s.cfg.Profile, stored), nil
}

func (s *Service) patchPlugin(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	var body pluginPatch
	cur, err := s.decodeWithSettings(r, &body)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	found := false
	for i := range cur {
		if cur[i].Name != name {
			continue
		}
		found = true
		if body.Enabled != nil {
			if !*body.Enabled && name == s.cfg.Profile.Assign {
				s.fail(w, r, controlplane.Invalidf("%s picks devices and cannot be disabled", name))
				return
			}
			cur[i].Enabled = *body.Enabled
		}
		if body.Weight != nil {
			if *body.Weight < 0 || *body.Weight > 1e6 {
				s.fail(w, r, controlplane.Invalidf("weight must be between 0 and 1e6"))
				return
			}
			cur[i].Weight = *body.Weight
		}
	}
	if !found {
		s.fail(w, r, fmt.Errorf("plugin %q: %w", name, controlplane.ErrNotFound))
		return
	}
	httpapi.SetAudit(r.Context(), "plugin.update", "plugin/"+name)
	if err := s.saveSettings(r, cur); err != nil {
		s.fail(w, r, err)
		return
	}
	s.listPlugins(w, r)
}

func (s *Service) putOrder(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Order []string `json:"order"`
	}
	cur, err := s.decodeWithSettings(r, &body)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	byName := map[string]controlplane.PluginSetting{}
	for _, c := range cur {
		byName[c.Name] = c
	}
	if len(body.Order) != len(cur) {
		s.fail(w, r, controlplane.Invalidf("order must list each of the %d plugins exactly once", len(cur)))
		return
	}
	next := make([]controlplane.PluginSetting, 0, len(cur))
	for i, n := range body.Order {
		c, ok := byName[n]
		if !ok {
			s.fail(w, r, controlplane.Invalidf("order must list each of the %d plugins exactly once (%q unknown or repeated)", len(cur), n))
			return
		}
		delete(byName, n)
		c.Position = i
		next = append(next, c)
	}
	httpapi.SetAudit(r.Context(), "plugin.order", "plugins")
	if err := s.saveSettings(r, next); err != nil {
		s.fail(w, r, err)
		return
	}
	s.listPlugins(w, r)
}

func mustSnapshot(ratio float64) *snapshot {
	sn, err := newSnapshot(ratio)
	if err != nil {
		panic(err) // ratio validated by Config
	}
	return sn
}

var errNotLeader = errors.New("this server is not the scheduler leader")
