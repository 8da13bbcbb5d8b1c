package storesql

import (
	"context"
	"errors"
	"fmt"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

// Tenants, their projects and memberships.

const tenantCols = `id, name, display_name, disabled, node_selector, created_at, updated_at`

func (q Queries) scanTenant(row Row) (*controlplane.Tenant, error) {
	var t controlplane.Tenant
	var sel []byte
	if err := row.Scan(&t.ID, &t.Name, &t.DisplayName, &t.Disabled, &sel, q.db.ScanTime(&t.CreatedAt),
		q.db.ScanTime(&t.UpdatedAt)); err != nil {
		return nil, err
	}
	var err error
	if t.NodeSelector, err = storeutil.DecodeSelector(sel); err != nil {
		return nil, err
	}
	return &t, nil
}

// CreateTenant inserts t; ErrConflict when the name is taken.
func (q Queries) CreateTenant(ctx context.Context, t *controlplane.Tenant) error {
	if err := t.Validate(); err != nil {
		return err
	}
	sel, err := storeutil.SelectorJSON(t.NodeSelector)
	if err != nil {
		return err
	}
	now := q.db.Now()
	return q.db.Write(ctx, func(c Conn) error {
		err := c.QueryRow(ctx, `INSERT INTO tenants (name, display_name, disabled, node_selector, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $5) RETURNING id`, t.Name, t.DisplayName, t.Disabled, sel, q.db.Time(now)).Scan(&t.ID)
		if err != nil {
			return fmt.Errorf("tenant %q: %w", t.Name, err)
		}
		t.CreatedAt, t.UpdatedAt = now, now
		return nil
	})
}

// GetTenant returns the tenant called name.
func (q Queries) GetTenant(ctx context.Context, name string) (*controlplane.Tenant, error) {
	t, err := q.scanTenant(q.db.Reader().QueryRow(ctx, `SELECT `+tenantCols+` FROM tenants WHERE name = $1`, name))
	if err != nil {
		return nil, fmt.Errorf("tenant %q: %w", name, err)
	}
	return t, nil
}

// ListTenants returns every tenant by name (bytewise).
func (q Queries) ListTenants(ctx context.Context) ([]*controlplane.Tenant, error) {
	return all(ctx, q.db.Reader(), q.scanTenant, `SELECT `+tenantCols+` FROM tenants ORDER BY `+q.db.Bytewise("name"))
}

// UpdateTenant renames (display name), disables or re-pools a tenant.
func (q Queries) UpdateTenant(ctx context.Context, name string, upd controlplane.TenantUpdate) (*controlplane.Tenant, error) {
	var out *controlplane.Tenant
	err := q.db.Tx(ctx, func(c Conn) error {
		t, err := q.scanTenant(c.QueryRow(ctx, `SELECT `+tenantCols+` FROM tenants WHERE name = $1`+q.db.ForUpdate(), name))
		if err != nil {
			return fmt.Errorf("tenant %q: %w", name, err)
		}
		if err := storeutil.ApplyTenantUpdate(t, upd); err != nil {
			return err
		}
		sel, err := storeutil.SelectorJSON(t.NodeSelector)
		if err != nil {
			return err
		}
		t.UpdatedAt = q.db.Now()
		if _, err := c.Exec(ctx, `UPDATE tenants SET display_name = $1, disabled = $2, node_selector = $3, updated_at = $4
			WHERE id = $5`, t.DisplayName, t.Disabled, sel, q.db.Time(t.UpdatedAt), t.ID); err != nil {
			return err
		}
		out = t
		return nil
	})
	return out, err
}

const projectCols = `p.id, t.name, p.name, p.display_name, p.disabled, p.created_at, p.updated_at`
const projectFrom = ` FROM projects p JOIN tenants t ON t.id = p.tenant_id`

func (q Queries) scanProject(row Row) (*controlplane.Project, error) {
	var p controlplane.Project
	if err := row.Scan(&p.ID, &p.Tenant, &p.Name, &p.DisplayName, &p.Disabled, q.db.ScanTime(&p.CreatedAt),
		q.db.ScanTime(&p.UpdatedAt)); err != nil {
		return nil, err
	}
	return &p, nil
}

func tenantID(ctx context.Context, c Conn, name string) (int64, error) {
	var id int64
	if err := c.QueryRow(ctx, `SELECT id FROM tenants WHERE name = $1`, name).Scan(&id); err != nil {
		return 0, fmt.Errorf("tenant %q: %w", name, err)
	}
	return id, nil
}

// CreateProject inserts p into its tenant.
func (q Queries) CreateProject(ctx context.Context, p *controlplane.Project) error {
	if err := p.Validate(); err != nil {
		return err
	}
	now := q.db.Now()
	return q.db.Tx(ctx, func(c Conn) error {
		tid, err := tenantID(ctx, c, p.Tenant)
		if err != nil {
			return err
		}
		err = c.QueryRow(ctx, `INSERT INTO projects (tenant_id, name, display_name, disabled, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $5) RETURNING id`, tid, p.Name, p.DisplayName, p.Disabled, q.db.Time(now)).Scan(&p.ID)
		if err != nil {
			return fmt.Errorf("project %s/%s: %w", p.Tenant, p.Name, err)
		}
		p.CreatedAt, p.UpdatedAt = now, now
		return nil
	})
}

// GetProject returns one project of tenant.
func (q Queries) GetProject(ctx context.Context, tenant, name string) (*controlplane.Project, error) {
	p, err := q.scanProject(q.db.Reader().QueryRow(ctx, `SELECT `+projectCols+projectFrom+` WHERE t.name = $1 AND p.name = $2`,
		tenant, name))
	if err != nil {
		return nil, fmt.Errorf("project %s/%s: %w", tenant, name, err)
	}
	return p, nil
}

// ListProjects returns tenant's projects by name (ErrNotFound: no such tenant).
func (q Queries) ListProjects(ctx context.Context, tenant string) ([]*controlplane.Project, error) {
	if _, err := tenantID(ctx, q.db.Reader(), tenant); err != nil {
		return nil, err
	}
	return all(ctx, q.db.Reader(), q.scanProject, `SELECT `+projectCols+projectFrom+` WHERE t.name = $1
		ORDER BY `+q.db.Bytewise("p.name"), tenant)
}

// UpdateProject renames (display name) or disables a project.
func (q Queries) UpdateProject(ctx context.Context, tenant, name string, upd controlplane.ProjectUpdate) (*controlplane.Project, error) {
	var out *controlplane.Project
	err := q.db.Tx(ctx, func(c Conn) error {
		p, err := q.scanProject(c.QueryRow(ctx, `SELECT `+projectCols+projectFrom+` WHERE t.name = $1 AND p.name = $2`+
			q.db.ForUpdate("p"), tenant, name))
		if err != nil {
			return fmt.Errorf("project %s/%s: %w", tenant, name, err)
		}
		if err := storeutil.ApplyProjectUpdate(p, upd); err != nil {
			return err
		}
		p.UpdatedAt = q.db.Now()
		if _, err := c.Exec(ctx, `UPDATE projects SET display_name = $1, disabled = $2, updated_at = $3 WHERE id = $4`,
			p.DisplayName, p.Disabled, q.db.Time(p.UpdatedAt), p.ID); err != nil {
			return err
		}
		out = p
		return nil
	})
	return out, err
}

const memberCols = `t.name, t.disabled, u.id, u.username, m.role, m.created_at`
const memberFrom = ` FROM tenant_members m JOIN tenants t ON t.id = m.tenant_id JOIN users u ON u.id = m.user_id`

func (q Queries) scanMember(row Row) (*controlplane.Membership, error) {
	var m controlplane.Membership
	if err := row.Scan(&m.Tenant, &m.TenantDisabled, &m.UserID, &m.Username, &m.Role, q.db.ScanTime(&m.CreatedAt)); err != nil {
		return nil, err
	}
	return &m, nil
}

// PutMember adds or re-roles userID in tenant.
func (q Queries) PutMember(ctx context.Context, tenant string, userID int64, role controlplane.TenantRole) (*controlplane.Membership, error) {
	if !role.Valid() {
		return nil, controlplane.Invalidf("tenant role must be tenant-admin, member or viewer, not %q", role)
	}
	var out *controlplane.Membership
	err := q.db.Tx(ctx, func(c Conn) error {
		tid, err := tenantID(ctx, c, tenant)
		if err != nil {
			return err
		}
		_, err = c.Exec(ctx, `INSERT INTO tenant_members (tenant_id, user_id, role, created_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (tenant_id, user_id) DO UPDATE SET role = excluded.role`, tid, userID, string(role), q.db.Time(q.db.Now()))
		if errors.Is(err, controlplane.ErrConflict) { // the user's foreign key
			return fmt.Errorf("user %d: %w", userID, controlplane.ErrNotFound)
		}
		if err != nil {
			return err
		}
		out, err = q.scanMember(c.QueryRow(ctx, `SELECT `+memberCols+memberFrom+` WHERE m.tenant_id = $1 AND m.user_id = $2`, tid, userID))
		return err
	})
	return out, err
}

// RemoveMember drops userID from tenant.
func (q Queries) RemoveMember(ctx context.Context, tenant string, userID int64) error {
	return q.db.Tx(ctx, func(c Conn) error {
		tid, err := tenantID(ctx, c, tenant)
		if err != nil {
			return err
		}
		n, err := c.Exec(ctx, `DELETE FROM tenant_members WHERE tenant_id = $1 AND user_id = $2`, tid, userID)
		return affected(n, err, fmt.Sprintf("member %d of tenant %q", userID, tenant))
	})
}

// ListMembers returns tenant's members by username.
func (q Queries) ListMembers(ctx context.Context, tenant string) ([]*controlplane.Membership, error) {
	if _, err := tenantID(ctx, q.db.Reader(), tenant); err != nil {
		return nil, err
	}
	return all(ctx, q.db.Reader(), q.scanMember, `SELECT `+memberCols+memberFrom+` WHERE t.name = $1
		ORDER BY `+q.db.Bytewise("u.username"), tenant)
}

// ListMemberships returns userID's memberships by tenant name.
func (q Queries) ListMemberships(ctx context.Context, userID int64) ([]*controlplane.Membership, error) {
	return all(ctx, q.db.Reader(), q.scanMember, `SELECT `+memberCols+memberFrom+` WHERE m.user_id = $1
		ORDER BY `+q.db.Bytewise("t.name"), userID)
}
