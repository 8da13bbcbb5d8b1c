package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

var _ controlplane.TenantStore = (*DB)(nil)

const tenantCols = `id, name, display_name, disabled, node_selector, created_at, updated_at`

func scanTenant(row rowScanner) (*controlplane.Tenant, error) {
	var t controlplane.Tenant
	var sel []byte
	var created, updated int64
	if err := row.Scan(&t.ID, &t.Name, &t.DisplayName, &t.Disabled, &sel, &created, &updated); err != nil {
		return nil, mapErr(err)
	}
	var err error
	if t.NodeSelector, err = storeutil.DecodeSelector(sel); err != nil {
		return nil, err
	}
	t.CreatedAt, t.UpdatedAt = fromTS(created), fromTS(updated)
	return &t, nil
}

// CreateTenant inserts t; ErrConflict when the name is taken.
func (db *DB) CreateTenant(ctx context.Context, t *controlplane.Tenant) error {
	if err := t.Validate(); err != nil {
		return err
	}
	sel, err := storeutil.SelectorJSON(t.NodeSelector)
	if err != nil {
		return err
	}
	now := db.now()
	return db.write(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `INSERT INTO tenants (name, display_name, disabled, node_selector, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?) RETURNING id`, t.Name, t.DisplayName, t.Disabled, sel, ts(now), ts(now)).Scan(&t.ID)
		if err != nil {
			return fmt.Errorf("tenant %q: %w", t.Name, mapErr(err))
		}
		t.CreatedAt, t.UpdatedAt = now, now
		return nil
	})
}

// GetTenant returns the tenant called name.
func (db *DB) GetTenant(ctx context.Context, name string) (*controlplane.Tenant, error) {
	t, err := scanTenant(db.r.QueryRowContext(ctx, `SELECT `+tenantCols+` FROM tenants WHERE name = ?`, name))
	if err != nil {
		return nil, fmt.Errorf("tenant %q: %w", name, err)
	}
	return t, nil
}

// ListTenants returns every tenant by name.
func (db *DB) ListTenants(ctx context.Context) ([]*controlplane.Tenant, error) {
	return queryAll(ctx, db, scanTenant, `SELECT `+tenantCols+` FROM tenants ORDER BY name`)
}

// UpdateTenant renames (display name), disables or re-pools a tenant.
func (db *DB) UpdateTenant(ctx context.Context, name string, upd controlplane.TenantUpdate) (*controlplane.Tenant, error) {
	var out *controlplane.Tenant
	err := db.write(ctx, func(tx *sql.Tx) error {
		t, err := scanTenant(tx.QueryRowContext(ctx, `SELECT `+tenantCols+` FROM tenants WHERE name = ?`, name))
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
		t.UpdatedAt = db.now()
		if _, err := tx.ExecContext(ctx, `UPDATE tenants SET display_name = ?, disabled = ?, node_selector = ?, updated_at = ?
			WHERE id = ?`, t.DisplayName, t.Disabled, sel, ts(t.UpdatedAt), t.ID); err != nil {
			return mapErr(err)
		}
		out = t
		return nil
	})
	return out, err
}

const projectCols = `p.id, t.name, p.name, p.display_name, p.disabled, p.created_at, p.updated_at`

func scanProject(row rowScanner) (*controlplane.Project, error) {
	var p controlplane.Project
	var created, updated int64
	if err := row.Scan(&p.ID, &p.Tenant, &p.Name, &p.DisplayName, &p.Disabled, &created, &updated); err != nil {
		return nil, mapErr(err)
	}
	p.CreatedAt, p.UpdatedAt = fromTS(created), fromTS(updated)
	return &p, nil
}

func tenantID(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, name string) (int64, error) {
	var id int64
	if err := q.QueryRowContext(ctx, `SELECT id FROM tenants WHERE name = ?`, name).Scan(&id); err != nil {
		return 0, fmt.Errorf("tenant %q: %w", name, mapErr(err))
	}
	return id, nil
}

// CreateProject inserts p into its tenant.
func (db *DB) CreateProject(ctx context.Context, p *controlplane.Project) error {
	if err := p.Validate(); err != nil {
		return err
	}
	now := db.now()
	return db.write(ctx, func(tx *sql.Tx) error {
		tid, err := tenantID(ctx, tx, p.Tenant)
		if err != nil {
			return err
		}
		err = tx.QueryRowContext(ctx, `INSERT INTO projects (tenant_id, name, display_name, disabled, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?) RETURNING id`, tid, p.Name, p.DisplayName, p.Disabled, ts(now), ts(now)).Scan(&p.ID)
		if err != nil {
			return fmt.Errorf("project %s/%s: %w", p.Tenant, p.Name, mapErr(err))
		}
		p.CreatedAt, p.UpdatedAt = now, now
		return nil
	})
}

const projectFrom = ` FROM projects p JOIN tenants t ON t.id = p.tenant_id`

// GetProject returns one project of tenant.
func (db *DB) GetProject(ctx context.Context, tenant, name string) (*controlplane.Project, error) {
	p, err := scanProject(db.r.QueryRowContext(ctx, `SELECT `+projectCols+projectFrom+` WHERE t.name = ? AND p.name = ?`, tenant, name))
	if err != nil {
		return nil, fmt.Errorf("project %s/%s: %w", tenant, name, err)
	}
	return p, nil
}

// ListProjects returns tenant's projects by name (ErrNotFound: no such tenant).
func (db *DB) ListProjects(ctx context.Context, tenant string) ([]*controlplane.Project, error) {
	if _, err := tenantID(ctx, db.r, tenant); err != nil {
		return nil, err
	}
	return queryAll(ctx, db, scanProject, `SELECT `+projectCols+projectFrom+` WHERE t.name = ? ORDER BY p.name`, tenant)
}

// UpdateProject renames (display name) or disables a project.
func (db *DB) UpdateProject(ctx context.Context, tenant, name string, upd controlplane.ProjectUpdate) (*controlplane.Project, error) {
	var out *controlplane.Project
	err := db.write(ctx, func(tx *sql.Tx) error {
		p, err := scanProject(tx.QueryRowContext(ctx, `SELECT `+projectCols+projectFrom+` WHERE t.name = ? AND p.name = ?`, tenant, name))
		if err != nil {
			return fmt.Errorf("project %s/%s: %w", tenant, name, err)
		}
		if err := storeutil.ApplyProjectUpdate(p, upd); err != nil {
			return err
		}
		p.UpdatedAt = db.now()
		if _, err := tx.ExecContext(ctx, `UPDATE projects SET display_name = ?, disabled = ?, updated_at = ? WHERE id = ?`,
			p.DisplayName, p.Disabled, ts(p.UpdatedAt), p.ID); err != nil {
			return mapErr(err)
		}
		out = p
		return nil
	})
	return out, err
}

const memberCols = `t.name, t.disabled, u.id, u.username, m.role, m.created_at`
const memberFrom = ` FROM tenant_members m JOIN tenants t ON t.id = m.tenant_id JOIN users u ON u.id = m.user_id`

func scanMember(row rowScanner) (*controlplane.Membership, error) {
	var m controlplane.Membership
	var created int64
	if err := row.Scan(&m.Tenant, &m.TenantDisabled, &m.UserID, &m.Username, &m.Role, &created); err != nil {
		return nil, mapErr(err)
	}
	m.CreatedAt = fromTS(created)
	return &m, nil
}

// PutMember adds or re-roles userID in tenant.
func (db *DB) PutMember(ctx context.Context, tenant string, userID int64, role controlplane.TenantRole) (*controlplane.Membership, error) {
	if !role.Valid() {
		return nil, controlplane.Invalidf("tenant role must be tenant-admin, member or viewer, not %q", role)
	}
	var out *controlplane.Membership
	err := db.write(ctx, func(tx *sql.Tx) error {
		tid, err := tenantID(ctx, tx, tenant)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO tenant_members (tenant_id, user_id, role, created_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (tenant_id, user_id) DO UPDATE SET role = excluded.role`, tid, userID, role, ts(db.now()))
		if err != nil {
			if errors.Is(mapErr(err), controlplane.ErrConflict) { // the user's foreign key
				return fmt.Errorf("user %d: %w", userID, controlplane.ErrNotFound)
			}
			return mapErr(err)
		}
		out, err = scanMember(tx.QueryRowContext(ctx, `SELECT `+memberCols+memberFrom+` WHERE m.tenant_id = ? AND m.user_id = ?`, tid, userID))
		return err
	})
	return out, err
}

// RemoveMember drops userID from tenant.
func (db *DB) RemoveMember(ctx context.Context, tenant string, userID int64) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		tid, err := tenantID(ctx, tx, tenant)
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM tenant_members WHERE tenant_id = ? AND user_id = ?`, tid, userID)
		if err != nil {
			return mapErr(err)
		}
		return affected(res, fmt.Sprintf("member %d of tenant %q", userID, tenant))
	})
}

// ListMembers returns tenant's members by username.
func (db *DB) ListMembers(ctx context.Context, tenant string) ([]*controlplane.Membership, error) {
	if _, err := tenantID(ctx, db.r, tenant); err != nil {
		return nil, err
	}
	return queryAll(ctx, db, scanMember, `SELECT `+memberCols+memberFrom+` WHERE t.name = ? ORDER BY u.username`, tenant)
}

// ListMemberships returns userID's memberships by tenant name.
func (db *DB) ListMemberships(ctx context.Context, userID int64) ([]*controlplane.Membership, error) {
	return queryAll(ctx, db, scanMember, `SELECT `+memberCols+memberFrom+` WHERE m.user_id = ? ORDER BY t.name`, userID)
}
