package auth

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
)

// accountStore serves one user and their memberships and counts reads;
// beforeRead, when set, runs inside each user read (a write racing it).
type accountStore struct {
	controlplane.Store // only the methods below are called
	mu                 sync.Mutex
	user               controlplane.User
	memberships        []*controlplane.Membership
	reads              int
	beforeRead         func()
}

func (s *accountStore) GetUser(_ context.Context, id int64) (*controlplane.User, error) {
	s.mu.Lock()
	hook := s.beforeRead
	s.mu.Unlock()
	if hook != nil {
		hook()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads++
	if id != s.user.ID {
		return nil, fmt.Errorf("user %d: %w", id, controlplane.ErrNotFound)
	}
	u := s.user
	return &u, nil
}

func (s *accountStore) ListMemberships(_ context.Context, userID int64) ([]*controlplane.Membership, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if userID != s.user.ID {
		return nil, nil
	}
	return append([]*controlplane.Membership(nil), s.memberships...), nil
}

// The remaining TenantStore methods are never called here.
func (s *accountStore) CreateTenant(context.Context, *controlplane.Tenant) error { panic("unused") }
func (s *accountStore) GetTenant(context.Context, string) (*controlplane.Tenant, error) {
	panic("unused")
}
func (s *accountStore) ListTenants(context.Context) ([]*controlplane.Tenant, error) { panic("unused") }
func (s *accountStore) UpdateTenant(context.Context, string, controlplane.TenantUpdate) (*controlplane.Tenant, error) {
	panic("unused")
}
func (s *accountStore) CreateProject(context.Context, *controlplane.Project) error { panic("unused") }
func (s *accountStore) GetProject(context.Context, string, string) (*controlplane.Project, error) {
	panic("unused")
}
func (s *accountStore) ListProjects(context.Context, string) ([]*controlplane.Project, error) {
	panic("unused")
}
func (s *accountStore) UpdateProject(context.Context, string, string, controlplane.ProjectUpdate) (*controlplane.Project, error) {
	panic("unused")
}
func (s *accountStore) PutMember(context.Context, string, int64, controlplane.TenantRole) (*controlplane.Membership, error) {
	panic("unused")
}
func (s *accountStore) RemoveMember(context.Context, string, int64) error { panic("unused") }
func (s *accountStore) ListMembers(context.Context, string) ([]*controlplane.Membership, error) {
	panic("unused")
}

func (s *accountStore) setMemberships(ms ...*controlplane.Membership) {
	s.mu.Lock()
	s.memberships = ms
	s.mu.Unlock()
}

func (s *accountStore) readCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reads
}

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func accountService(st *accountStore, clk *fakeClock) *Service {
	return &Service{store: st, cfg: Config{Now: clk.Now}, log: slog.New(slog.DiscardHandler),
		keys: newKeyCache(time.Minute, clk.Now), accounts: newAccountCache(clk.Now)}
}

// TestAccountCache: one store read per user per accountTTL, and every
// way a change reaches this server (ForgetOwner, ForgetAccounts, the
// change feed's owner and all changes) makes the next read see it.
func TestAccountCache(t *testing.T) {
	ctx := context.Background()
	clk := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	acme := &controlplane.Membership{Tenant: "acme", UserID: 7, Role: controlplane.TenantMemberRole}
	st := &accountStore{user: controlplane.User{ID: 7, Username: "bob", Status: controlplane.UserActive, Tenant: "acme"},
		memberships: []*controlplane.Membership{acme}}
	s := accountService(st, clk)

	for range 5 {
		acc, err := s.Account(ctx, 7)
		require.NoError(t, err)
		require.Equal(t, "acme", acc.Tenant)
		require.Len(t, acc.Memberships, 1)
	}
	require.Equal(t, 1, st.readCount(), "served from the cache within accountTTL")

	// A write by another program (no notice): seen once accountTTL passed.
	st.setMemberships()
	acc, _ := s.Account(ctx, 7)
	require.Len(t, acc.Memberships, 1, "within accountTTL the cached memberships are served")
	clk.Advance(accountTTL)
	acc, _ = s.Account(ctx, 7)
	require.Empty(t, acc.Memberships, "a cached account is never older than accountTTL")
	require.Equal(t, 2, st.readCount())

	forgets := map[string]func(){
		"ForgetOwner":        func() { s.ForgetOwner(7) },
		"ForgetAccounts":     s.ForgetAccounts,
		"feed: owner change": func() { s.onAuthChange(controlplane.AuthChange{OwnerID: 7}) },
		"feed: all":          func() { s.onAuthChange(controlplane.AuthChange{All: true}) },
	}
	for name, forget := range forgets {
		st.setMemberships(acme)
		clk.Advance(accountTTL)
		acc, _ = s.Account(ctx, 7)
		require.Len(t, acc.Memberships, 1, name)
		st.setMemberships()
		forget()
		acc, _ = s.Account(ctx, 7)
		require.Empty(t, acc.Memberships, "%s: the next read after the change sees it", name)
	}

	// Another user's change or a key change leaves this entry alone.
	reads := st.readCount()
	s.ForgetOwner(8)
	s.onAuthChange(controlplane.AuthChange{KeyID: 3})
	_, _ = s.Account(ctx, 7)
	require.Equal(t, reads, st.readCount())

	_, err := s.Account(ctx, 9)
	require.ErrorIs(t, err, controlplane.ErrNotFound)
}

// TestAccountLoadRacingAChange: a load that read the store before a
// change was forgotten is used by its own request but not kept, so the
// next request reads the store again.
func TestAccountLoadRacingAChange(t *testing.T) {
	ctx := context.Background()
	clk := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	st := &accountStore{user: controlplane.User{ID: 7, Username: "bob", Status: controlplane.UserActive},
		memberships: []*controlplane.Membership{{Tenant: "acme", UserID: 7, Role: controlplane.TenantMemberRole}}}
	s := accountService(st, clk)
	// The removal commits and is forgotten while the load is between its
	// user read and its memberships read: what it holds may predate it.
	st.beforeRead = func() {
		st.mu.Lock()
		st.beforeRead = nil
		st.mu.Unlock()
		s.ForgetOwner(7)
	}
	_, err := s.Account(ctx, 7)
	require.NoError(t, err)
	st.setMemberships()
	acc, err := s.Account(ctx, 7)
	require.NoError(t, err)
	require.Empty(t, acc.Memberships, "the load that raced the change was not kept")
	require.Equal(t, 2, st.readCount())
}
