package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/internal/storeutil"
)

var _ controlplane.TenantStore = (*DB)(nil)

const tenantCols = `id, name, display_name, disabled, node_selector, created_at, updated_at`

func scanTenant(row pgx.Row) (*controlplane.Tenant, error) {
	var t controlplane.Tenant
	var sel []byte
	if err := row.Scan(&t.ID, &t.Name, &t.DisplayName, &t.Disabled, &sel, &t.CreatedAt, &t.UpdatedAt); err != nil {
		return nil, mapErr(err)
	}
	var err error
	if t.NodeSelector, err = storeutil.DecodeSelector(sel); err != nil {
		return nil, err
	}
	t.CreatedAt, t.UpdatedAt = utc(t.CreatedAt), utc(t.UpdatedAt)
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
	err = db.pool.QueryRow(ctx, `INSERT INTO tenants (name, display_name, disabled, node_selector, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $5) RETURNING id`, t.Name, t.DisplayName, t.Disabled, sel, now).Scan(&t.ID)
	if err != nil {
		return fmt.Errorf("tenant %q: %w", t.Name, mapErr(err))
	}
	t.CreatedAt, t.UpdatedAt = now, now
	return nil
}

// GetTenant returns the tenant called name.
func (db *DB) GetTenant(ctx context.Context, name string) (*controlplane.Tenant, error) {
	t, err := scanTenant(db.pool.QueryRow(ctx, `SELECT `+tenantCols+` FROM tenants WHERE name = $1`, name))
	if err != nil {
		return nil, fmt.Errorf("tenant %q: %w", name, err)
	}
	return t, nil
}

// ListTenants returns every tenant by name (bytewise, as SQLite orders).
func (db *DB) ListTenants(ctx context.Context) ([]*controlplane.Tenant, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+tenantCols+` FROM tenants ORDER BY name COLLATE "C"`)
	return collect(rows, err, scanTenant)
}

// UpdateTenant renames (display name), disables or re-pools a tenant.
func (db *DB) UpdateTenant(ctx context.Context, name string, upd controlplane.TenantUpdate) (*controlplane.Tenant, error) {
	var out *controlplane.Tenant
	err := db.tx(ctx, func(tx pgx.Tx) error {
		t, err := scanTenant(tx.QueryRow(ctx, `SELECT `+tenantCols+` FROM tenants WHERE name = $1 FOR UPDATE`, name))
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
		if _, err := tx.Exec(ctx, `UPDATE tenants SET display_name = $1, disabled = $2, node_selector = $3, updated_at = $4
			WHERE id = $5`, t.DisplayName, t.Disabled, sel, t.UpdatedAt, t.ID); err != nil {
			return mapErr(err)
		}
		out = t
		return nil
	})
	return out, err
}

const projectCols = `p.id, t.name, p.name, p.display_name, p.disabled, p.created_at, p.updated_at`
const projectFrom = ` FROM projects p JOIN tenants t ON t.id = p.tenant_id`

func scanProject(row pgx.Row) (*controlplane.Project, error) {
	var p controlplane.Project
	if err := row.Scan(&p.ID, &p.Tenant, &p.Name, &p.DisplayName, &p.Disabled, &p.CreatedAt, &p.UpdatedAt); err != nil {
		return nil, mapErr(err)
	}
	p.CreatedAt, p.UpdatedAt = utc(p.CreatedAt), utc(p.UpdatedAt)
	return &p, nil
}

type rowQuerier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func tenantID(ctx context.Context, q rowQuerier, name string) (int64, error) {
	var id int64
	if err := q.QueryRow(ctx, `SELECT id FROM tenants WHERE name = $1`, name).Scan(&id); err != nil {
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
	return db.tx(ctx, func(tx pgx.Tx) error {
		tid, err := tenantID(ctx, tx, p.Tenant)
		if err != nil {
			return err
		}
		err = tx.QueryRow(ctx, `INSERT INTO projects (tenant_id, name, display_name, disabled, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $5) RETURNING id`, tid, p.Name, p.DisplayName, p.Disabled, now).Scan(&p.ID)
		if err != nil {
			return fmt.Errorf("project %s/%s: %w", p.Tenant, p.Name, mapErr(err))
		}
		p.CreatedAt, p.UpdatedAt = now, now
		return nil
	})
}

// GetProject returns one project of tenant.
func (db *DB) GetProject(ctx context.Context, tenant, name string) (*controlplane.Project, error) {
	p, err := scanProject(db.pool.QueryRow(ctx, `SELECT `+projectCols+projectFrom+` WHERE t.name = $1 AND p.name = $2`, tenant, name))
	if err != nil {
		return nil, fmt.Errorf("project %s/%s: %w", tenant, name, err)
	}
	return p, nil
}

// ListProjects returns tenant's projects by name (ErrNotFound: no such tenant).
func (db *DB) ListProjects(ctx context.Context, tenant string) ([]*controlplane.Project, error) {
	if _, err := tenantID(ctx, db.pool, tenant); err != nil {
		return nil, err
	}
	rows, err := db.pool.Query(ctx, `SELECT `+projectCols+projectFrom+` WHERE t.name = $1 ORDER BY p.name COLLATE "C"`, tenant)
	return collect(rows, err, scanProject)
}

// UpdateProject renames (display name) or disables a project.
func (db *DB) UpdateProject(ctx context.Context, tenant, name string, upd controlplane.ProjectUpdate) (*controlplane.Project, error) {
	var out *controlplane.Project
	err := db.tx(ctx, func(tx pgx.Tx) error {
		p, err := scanProject(tx.QueryRow(ctx, `SELECT `+projectCols+projectFrom+` WHERE t.name = $1 AND p.name = $2 FOR UPDATE OF p`, tenant, name))
		if err != nil {
			return fmt.Errorf("project %s/%s: %w", tenant, name, err)
		}
		if err := storeutil.ApplyProjectUpdate(p, upd); err != nil {
			return err
		}
		p.UpdatedAt = db.now()
		if _, err := tx.Exec(ctx, `UPDATE projects SET display_name = $1, disabled = $2, updated_at = $3 WHERE id = $4`,
			p.DisplayName, p.Disabled, p.UpdatedAt, p.ID); err != nil {
			return mapErr(err)
		}
		out = p
		return nil
	})
	return out, err
}

const memberCols = `t.name, t.disabled, u.id, u.username, m.role, m.created_at`
const memberFrom = ` FROM tenant_members m JOIN tenants t ON t.id = m.tenant_id JOIN users u ON u.id = m.user_id`

func scanMember(row pgx.Row) (*controlplane.Membership, error) {
	var m controlplane.Membership
	if err := row.Scan(&m.Tenant, &m.TenantDisabled, &m.UserID, &m.Username, &m.Role, &m.CreatedAt); err != nil {
		return nil, mapErr(err)
	}
	m.CreatedAt = utc(m.CreatedAt)
	return &m, nil
}

// PutMember adds or re-roles userID in tenant.
func (db *DB) PutMember(ctx context.Context, tenant string, userID int64, role controlplane.TenantRole) (*controlplane.Membership, error) {
	if !role.Valid() {
		return nil, controlplane.Invalidf("tenant role must be tenant-admin, member or viewer, not %q", role)
	}
	var out *controlplane.Membership
	err := db.tx(ctx, func(tx pgx.Tx) error {
		tid, err := tenantID(ctx, tx, tenant)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO tenant_members (tenant_id, user_id, role, created_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (tenant_id, user_id) DO UPDATE SET role = excluded.role`, tid, userID, string(role), db.now())
		if err != nil {
			if errors.Is(mapErr(err), controlplane.ErrConflict) { // the user's foreign key
				return fmt.Errorf("user %d: %w", userID, controlplane.ErrNotFound)
			}
			return mapErr(err)
		}
		out, err = scanMember(tx.QueryRow(ctx, `SELECT `+memberCols+memberFrom+` WHERE m.tenant_id = $1 AND m.user_id = $2`, tid, userID))
		return err
	})
	return out, err
}

// RemoveMember drops userID from tenant.
func (db *DB) RemoveMember(ctx context.Context, tenant string, userID int64) error {
	return db.tx(ctx, func(tx pgx.Tx) error {
		tid, err := tenantID(ctx, tx, tenant)
		if err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `DELETE FROM tenant_members WHERE tenant_id = $1 AND user_id = $2`, tid, userID)
		if err != nil {
			return mapErr(err)
		}
		return affected(tag, fmt.Sprintf("member %d of tenant %q", userID, tenant))
	})
}

// ListMembers returns tenant's members by username.
func (db *DB) ListMembers(ctx context.Context, tenant string) ([]*controlplane.Membership, error) {
	if _, err := tenantID(ctx, db.pool, tenant); err != nil {
		return nil, err
	}
	rows, err := db.pool.Query(ctx, `SELECT `+memberCols+memberFrom+` WHERE t.name = $1 ORDER BY u.username COLLATE "C"`, tenant)
	return collect(rows, err, scanMember)
}

// ListMemberships returns userID's memberships by tenant name.
func (db *DB) ListMemberships(ctx context.Context, userID int64) ([]*controlplane.Membership, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+memberCols+memberFrom+` WHERE m.user_id = $1 ORDER BY t.name COLLATE "C"`, userID)
	return collect(rows, err, scanMember)
}
