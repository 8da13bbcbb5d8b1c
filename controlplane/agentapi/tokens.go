package agentapi

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/auth"
	"github.com/heteroflow/heteroflow/controlplane/httpapi"
)

// tokenPrefix marks bootstrap tokens so they are never mistaken for API keys.
const tokenPrefix = "hfb_"

type tokenRequest struct {
	Description string `json:"description"`
	TTLSeconds  int    `json:"ttl_seconds"`
}

type tokenJSON struct {
	ID          int64      `json:"id"`
	Prefix      string     `json:"prefix"`
	Description string     `json:"description"`
	CreatedBy   int64      `json:"created_by"`
	CreatedAt   time.Time  `json:"created_at"`
	ExpiresAt   time.Time  `json:"expires_at"`
	UsedAt      *time.Time `json:"used_at"`
	NodeID      string     `json:"node_id"`
	Token       string     `json:"token,omitempty"` // only in the create answer
}

func toTokenJSON(t *controlplane.BootstrapToken) tokenJSON {
	return tokenJSON{ID: t.ID, Prefix: t.Prefix, Description: t.Description, CreatedBy: t.CreatedBy,
		CreatedAt: t.CreatedAt, ExpiresAt: t.ExpiresAt, UsedAt: t.UsedAt, NodeID: t.NodeID}
}

// maxTokenTTL bounds a token's life: a leaked token is a node credential.
const maxTokenTTL = 30 * 24 * time.Hour

func (s *Service) createToken(w http.ResponseWriter, r *http.Request) {
	var req tokenRequest
	if err := decode(r, &req); err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	ttl := s.opts.TokenTTL
	if req.TTLSeconds != 0 {
		ttl = time.Duration(req.TTLSeconds) * time.Second
	}
	if ttl <= 0 || ttl > maxTokenTTL || len(req.Description) > 256 {
		httpapi.WriteError(w, r, s.log, controlplane.Invalidf("ttl_seconds must be 1–%d and description at most 256 characters",
			int(maxTokenTTL/time.Second)))
		return
	}
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		httpapi.WriteError(w, r, s.log, fmt.Errorf("random: %w", err))
		return
	}
	secret := tokenPrefix + base64.RawURLEncoding.EncodeToString(b)
	p := httpapi.PrincipalFrom(r.Context())
	t := &controlplane.BootstrapToken{Prefix: secret[:len(tokenPrefix)+6], TokenHash: auth.HashSecret(secret),
		Description: req.Description, CreatedBy: p.UserID, ExpiresAt: s.opts.Now().Add(ttl).UTC()}
	if err := s.store.CreateBootstrapToken(r.Context(), t); err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	httpapi.SetAudit(r.Context(), "bootstrap_token.create", "bootstrap-token/"+strconv.FormatInt(t.ID, 10))
	out := toTokenJSON(t)
	out.Token = secret
	writeJSON(w, http.StatusCreated, out)
}

func (s *Service) listTokens(w http.ResponseWriter, r *http.Request) {
	pg, err := pageOf(r)
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	ts, total, err := s.store.ListBootstrapTokens(r.Context(), pg)
	if err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	out := list[tokenJSON]{Items: []tokenJSON{}, Total: total, Limit: pg.Limit, Offset: pg.Offset}
	for _, t := range ts {
		out.Items = append(out.Items, toTokenJSON(t))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Service) deleteToken(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
	if err != nil || id <= 0 {
		httpapi.WriteError(w, r, s.log, controlplane.Invalidf("token id must be a positive integer"))
		return
	}
	httpapi.SetAudit(r.Context(), "bootstrap_token.delete", "bootstrap-token/"+strconv.FormatInt(id, 10))
	if err := s.store.DeleteBootstrapToken(r.Context(), id); err != nil {
		httpapi.WriteError(w, r, s.log, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// pageOf reads ?limit=&offset=.
func pageOf(r *http.Request) (controlplane.Page, error) {
	var p controlplane.Page
	for name, dst := range map[string]*int{"limit": &p.Limit, "offset": &p.Offset} {
		if v := r.URL.Query().Get(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return p, controlplane.Invalidf("%s must be a non-negative integer", name)
			}
			*dst = n
		}
	}
	return p.Normalize(), nil
}
