package auth

import (
	"context"
	"errors"
	"fmt"

	"github.com/heteroflow/heteroflow/controlplane"
)

// Directory checks a username and password against an external directory
// (ldapauth). Authenticate answers ErrDirectoryRejected (wrapped) for a
// wrong password or a user the directory does not hold, ErrNoSuchDirectoryUser
// for the latter, and any other error when the directory could not give
// an answer: Login then fails closed.
type Directory interface {
	Authenticate(ctx context.Context, username, password string) (*ExternalIdentity, error)
	// Lookup reads what the directory holds now of the account whose
	// entry is externalID (groups, disabled), without a password: a
	// session refresh re-reads it, and a login whose username found no
	// entry asks it whether the account's own entry is gone (anyone can
	// type an account's name, and user_filter may search another
	// attribute than the one accounts are named by).
	Lookup(ctx context.Context, externalID string) (*ExternalIdentity, error)
	Mapping() Mapping
}

// ErrDirectoryRejected: the directory refused the username and password.
var ErrDirectoryRejected = errors.New("directory refused the credentials")

// ErrNoSuchDirectoryUser: the directory holds no such user (removed, or
// never there). It wraps ErrDirectoryRejected.
var ErrNoSuchDirectoryUser = fmt.Errorf("%w: no such user", ErrDirectoryRejected)

// directoryLogin signs in through the directory; u is the local account of
// that name when there is one (nil on a first login).
func (s *Service) directoryLogin(ctx context.Context, u *controlplane.User, username, password, ip string) (*Session, error) {
	id, err := s.cfg.Directory.Authenticate(ctx, username, password)
	if errors.Is(err, ErrDirectoryRejected) {
		s.ipFails.fail(ip)
		if u != nil {
			if errors.Is(err, ErrNoSuchDirectoryUser) && u.Status == controlplane.UserActive && s.entryGone(ctx, u) {
				// Removed from the directory: the account and its sessions end here too.
				if derr := s.disableExternal(ctx, u); derr != nil {
					return nil, derr
				}
			} else if _, ferr := s.store.RecordLoginFailure(ctx, u.ID, s.cfg.Lockout.MaxFailures, s.cfg.Lockout.lockFor); ferr != nil {
				return nil, fmt.Errorf("record failed login: %w", ferr)
			}
		}
		return nil, errBadLogin
	}
	if err != nil {
		s.log.Error("directory sign-in failed; refusing the login", "err", err)
		return nil, err
	}
	if u != nil && u.LockedUntil != nil && s.cfg.Now().Before(*u.LockedUntil) && !s.trusted.has(u.ID, ip) {
		return nil, errBadLogin
	}
	sess, err := s.ExternalLogin(ctx, id, s.cfg.Directory.Mapping())
	if err != nil {
		return nil, err
	}
	s.ipFails.reset(ip)
	s.trusted.add(sess.User.ID, ip)
	if sess.User.FailedLogins != 0 || sess.User.LockedUntil != nil || sess.User.Lockouts != 0 {
		if sess.User, err = s.Unlock(ctx, sess.User.ID); err != nil {
			return nil, fmt.Errorf("reset failed logins: %w", err)
		}
	}
	return sess, nil
}

// recheckDirectory re-reads an LDAP account at a session refresh, so a
// session lasts no longer than the directory's word: removed or disabled
// there ends it (and disables the account here), changed groups change the
// role and tenants of the new access token, and a directory that does not
// answer refuses the refresh as it refuses a login.
func (s *Service) recheckDirectory(ctx context.Context, u *controlplane.User) (*controlplane.User, error) {
	id, err := s.cfg.Directory.Lookup(ctx, u.ExternalID)
	if errors.Is(err, ErrNoSuchDirectoryUser) {
		if derr := s.disableExternal(ctx, u); derr != nil {
			return nil, derr
		}
		return nil, fmt.Errorf("%w: the account is no longer in the directory", controlplane.ErrUnauthenticated)
	}
	if err != nil {
		s.log.Error("directory re-check at refresh failed; refusing the refresh", "user", u.Username, "err", err)
		return nil, err
	}
	return s.provision(ctx, id, s.cfg.Directory.Mapping())
}

// entryGone reports whether the directory says u's own entry is gone;
// false when it holds it or cannot tell.
func (s *Service) entryGone(ctx context.Context, u *controlplane.User) bool {
	_, err := s.cfg.Directory.Lookup(ctx, u.ExternalID)
	if err != nil && !errors.Is(err, ErrNoSuchDirectoryUser) {
		s.log.Warn("cannot tell whether a directory entry is still there; the account stays as it is", "user", u.Username, "err", err)
	}
	return errors.Is(err, ErrNoSuchDirectoryUser)
}
