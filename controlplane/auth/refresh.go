package auth

import (
	"context"
	"errors"
	"fmt"

	"github.com/heteroflow/heteroflow/controlplane"
)

var errBadRefresh = fmt.Errorf("%w: invalid or expired refresh token", controlplane.ErrUnauthenticated)

// Refresh exchanges a refresh token for a new session. The old token dies;
// presenting it again (reuse: it was stolen, or a client raced itself)
// revokes its whole family and returns ErrRefreshReuse.
func (s *Service) Refresh(ctx context.Context, token string) (*Session, error) {
	old, err := s.store.GetRefreshTokenByHash(ctx, HashSecret(token))
	if errors.Is(err, controlplane.ErrNotFound) {
		return nil, errBadRefresh
	}
	if err != nil {
		return nil, fmt.Errorf("load refresh token: %w", err)
	}
	now := s.cfg.Now()
	switch {
	case old.RevokedAt != nil:
		return nil, errBadRefresh
	case old.RotatedAt != nil:
		return nil, s.revokeOnReuse(ctx, old)
	case !now.Before(old.ExpiresAt):
		return nil, errBadRefresh
	}
	u, err := s.store.GetUser(ctx, old.UserID)
	if err != nil {
		if errors.Is(err, controlplane.ErrNotFound) {
			return nil, errBadRefresh
		}
		return nil, fmt.Errorf("load user: %w", err)
	}
	if u.Status != controlplane.UserActive {
		return nil, fmt.Errorf("%w: account is not active", controlplane.ErrUnauthenticated)
	}
	if u.AuthSource == controlplane.AuthSourceLDAP && s.cfg.Directory != nil {
		if u, err = s.recheckDirectory(ctx, u); err != nil {
			return nil, err
		}
	}
	access, exp, err := s.tokens.Issue(u)
	if err != nil {
		return nil, err
	}
	rt, hash, err := NewRefreshToken()
	if err != nil {
		return nil, err
	}
	next := &controlplane.RefreshToken{UserID: u.ID, Family: old.Family, TokenHash: hash,
		ExpiresAt: now.Add(s.cfg.RefreshTTL), CreatedAt: now}
	if err := s.store.RotateRefreshToken(ctx, old.ID, next); err != nil {
		if errors.Is(err, controlplane.ErrConflict) {
			// Someone rotated it between our read and write: that is reuse too.
			return nil, s.revokeOnReuse(ctx, old)
		}
		return nil, fmt.Errorf("rotate refresh token: %w", err)
	}
	return &Session{AccessToken: access, RefreshToken: rt, ExpiresAt: exp, User: u}, nil
}

func (s *Service) revokeOnReuse(ctx context.Context, t *controlplane.RefreshToken) error {
	if err := s.store.RevokeRefreshFamily(ctx, t.Family, s.cfg.Now()); err != nil {
		return fmt.Errorf("revoke refresh family after reuse: %w", err)
	}
	s.log.Warn("refresh token reuse; family revoked", "user_id", t.UserID)
	return ErrRefreshReuse
}

// Logout revokes the refresh token's family if it belongs to userID. An
// unknown token is not an error: logout is idempotent and says nothing
// about which tokens exist.
func (s *Service) Logout(ctx context.Context, token string, userID int64) error {
	t, err := s.store.GetRefreshTokenByHash(ctx, HashSecret(token))
	if errors.Is(err, controlplane.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("load refresh token: %w", err)
	}
	if t.UserID != userID {
		return nil
	}
	if err := s.store.RevokeRefreshFamily(ctx, t.Family, s.cfg.Now()); err != nil {
		return fmt.Errorf("revoke refresh family: %w", err)
	}
	return nil
}
