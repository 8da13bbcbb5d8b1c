package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/auth"
)

// Access says who may call a route: everyone (Public), any authenticated
// caller (Authenticated), or holders of a permission from auth's table,
// optionally narrowed to one kind of caller (Callers).
type Access struct {
	Public        bool
	Authenticated bool
	Perm          auth.Permission
	// Callers narrows the route to node agents' keys or to people on top
	// of Perm. nodes:write, for one, is held by agents (to report about
	// themselves) and by operators (to manage nodes), but no route wants
	// both: declaring which keeps Allows, and so the route listings and
	// the access tests, equal to what is enforced.
	Callers Callers
	// Tenant adds the caller's relation to the tenant named by the route's
	// {tenant} path parameter (see tenancy_access.go).
	Tenant TenantRule
}

// Callers is the kind of credential a route admits.
type Callers uint8

const (
	// AnyCaller admits every role the permission names.
	AnyCaller Callers = iota
	// AgentsOnly admits only node agents' API keys (role agent).
	AgentsOnly
	// PeopleOnly admits every role but agent.
	PeopleOnly
)

// ForAgents narrows a to node agents' API keys.
func (a Access) ForAgents() Access { a.Callers = AgentsOnly; return a }

// ForPeople narrows a to users and their API keys, refusing agent keys.
func (a Access) ForPeople() Access { a.Callers = PeopleOnly; return a }

// admits reports whether the caller kind of role passes a.Callers.
func (a Access) admits(role controlplane.Role) bool {
	switch a.Callers {
	case AgentsOnly:
		return role == controlplane.RoleAgent
	case PeopleOnly:
		return role != controlplane.RoleAgent
	}
	return true
}

// Public routes need no credentials.
var Public = Access{Public: true}

// Authenticated routes need any valid credential.
var Authenticated = Access{Authenticated: true}

// Perm requires res:act from the permission table; it panics on a pair the
// table does not know, because that is a programming error that would
// otherwise silently deny everyone.
func Perm(res auth.Resource, act auth.Action) Access {
	if !auth.Known(res, act) {
		panic(fmt.Sprintf("httpapi: permission %s:%s is not in the auth permission table", res, act))
	}
	return Access{Perm: auth.Permission{Resource: res, Action: act}}
}

// String is used in route listings and docs.
func (a Access) String() string {
	switch {
	case a.Public:
		return "public"
	case a.Authenticated:
		return "authenticated"
	}
	s := string(a.Perm.Resource) + ":" + string(a.Perm.Action)
	s += a.Tenant.suffix()
	switch a.Callers {
	case AgentsOnly:
		s += " (agents only)"
	case PeopleOnly:
		s += " (not agents)"
	}
	return s
}

// Allows reports whether role passes this access rule (for anonymous callers use Public).
func (a Access) Allows(role controlplane.Role) bool {
	if a.Public {
		return true
	}
	return a.admits(role) && (a.Authenticated || auth.Allowed(role, a.Perm.Resource, a.Perm.Action))
}

// check returns nil when the request's principal passes acc; otherwise
// ErrUnauthenticated (no or bad credentials) or ErrForbidden.
func check(ctx context.Context, acc Access) error {
	if acc.Public {
		return nil
	}
	p := PrincipalFrom(ctx)
	if p == nil {
		if err := authErrFrom(ctx); err != nil {
			return err
		}
		return fmt.Errorf("%w: authentication required", controlplane.ErrUnauthenticated)
	}
	switch {
	case !acc.admits(p.Role) && p.Role == controlplane.RoleAgent:
		return fmt.Errorf("%w: agent keys may not call this", controlplane.ErrForbidden)
	case !acc.admits(p.Role):
		return fmt.Errorf("%w: only a node agent's API key may call this", controlplane.ErrForbidden)
	case acc.Authenticated || auth.Allowed(p.Role, acc.Perm.Resource, acc.Perm.Action):
		return nil
	}
	return fmt.Errorf("%w: role %s may not %s %s", controlplane.ErrForbidden, p.Role, acc.Perm.Action, acc.Perm.Resource)
}

// credential extracts a bearer token or API key from the request; asKey
// when it came in X-API-Key.
func credential(r *http.Request) (cred string, asKey bool) {
	if k := r.Header.Get("X-API-Key"); k != "" {
		return k, true
	}
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:]), false
	}
	return "", false
}

// authenticate resolves credentials into the context. Bad credentials do
// not fail here: public routes (login) must still work with a stale token,
// so the failure is kept and reported by the access check of protected routes.
func (a *API) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cred, asKey := credential(r)
		cert := verifiedClientCert(r)
		if cred == "" && cert == nil {
			next.ServeHTTP(w, r)
			return
		}
		var (
			p   *auth.Principal
			err error
		)
		if cred != "" {
			verify := a.auth.Authenticate
			if asKey {
				verify = a.auth.AuthenticateKey
			}
			p, err = verify(r.Context(), cred, ClientIP(r.Context()))
			if err == nil && cert == nil && a.opts.RequireAgentCert && p.Role == controlplane.RoleAgent {
				p, err = nil, errAgentCertRequired
			}
		} else {
			p, err = a.certPrincipal(r.Context(), cert)
		}
		if err == nil {
			err = a.checkAgent(r.Context(), p)
		}
		if err == nil {
			err = a.loadMemberships(r.Context(), p)
		}
		ctx := r.Context()
		if err != nil {
			ctx = context.WithValue(ctx, keyAuthErr, err)
		} else {
			ctx = context.WithValue(ctx, keyPrincipal, p)
			if ri, _ := ctx.Value(keyReqInfo).(*reqInfo); ri != nil {
				ri.setActor(p.Actor())
			}
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// Require is the permission middleware for plain chi routes that other
// subsystems mount (see the package doc).
func (a *API) Require(acc Access) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if err := check(r.Context(), acc); err != nil {
				WriteError(w, r, a.log, err)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

func mutating(method string) bool {
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

// auditMutations records one audit entry for every mutating request,
// whatever its outcome (ok, denied, failed), after the response is written.
func (a *API) auditMutations(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !mutating(r.Method) {
			next.ServeHTTP(w, r)
			return
		}
		note := &auditNote{module: controlplane.ModuleAPI}
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		r = r.WithContext(context.WithValue(r.Context(), keyAudit, note))
		start := a.now()
		next.ServeHTTP(ww, r)

		note.mu.Lock()
		defer note.mu.Unlock()
		if note.skip {
			return
		}
		action := note.action
		if action == "" {
			pattern := r.URL.Path
			if rc := chi.RouteContext(r.Context()); rc != nil && rc.RoutePattern() != "" {
				pattern = rc.RoutePattern()
			}
			action = r.Method + " " + pattern
		}
		actor := note.actor
		if actor == "" {
			actor = PrincipalFrom(r.Context()).Actor()
		}
		st := ww.Status()
		level, result := controlplane.LevelInfo, "ok"
		switch {
		case st == http.StatusUnauthorized || st == http.StatusForbidden:
			level, result = controlplane.LevelWarn, "denied: "+note.errMsg
		case st >= 500:
			level, result = controlplane.LevelError, "failed: "+note.errMsg
		case st >= 400:
			level, result = controlplane.LevelWarn, "failed: "+note.errMsg
		}
		a.auditor.Record(&controlplane.AuditEntry{At: start.UTC().Truncate(time.Microsecond), Actor: actor,
			Module: note.module, Level: level, Action: action, Target: note.target,
			SourceIP: ClientIP(r.Context()), Result: result, Detail: note.detail})
	})
}
