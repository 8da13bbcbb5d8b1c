-- Tenants and projects as objects: tenants (name is the key tasks, quotas
-- and usage name; display_name is what a rename changes), their projects,
-- and memberships with a per-tenant role (tenant-admin, member, viewer).
-- Existing free-text tenants (users, tasks, quotas) become tenant rows,
-- their (tenant, project) pairs project rows, and each user with a tenant
-- a member of it (viewers as viewer, everyone else as member). API keys
-- gain a tenant column for keys scoped to one tenant.

-- +goose Up
CREATE TABLE tenants (
    id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name          TEXT        NOT NULL UNIQUE,
    display_name  TEXT        NOT NULL DEFAULT '',
    disabled      BOOLEAN     NOT NULL DEFAULT FALSE,
    node_selector JSONB       NOT NULL DEFAULT '{}',
    created_at    TIMESTAMPTZ NOT NULL,
    updated_at    TIMESTAMPTZ NOT NULL
);

CREATE TABLE projects (
    id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id    BIGINT      NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    name         TEXT        NOT NULL,
    display_name TEXT        NOT NULL DEFAULT '',
    disabled     BOOLEAN     NOT NULL DEFAULT FALSE,
    created_at   TIMESTAMPTZ NOT NULL,
    updated_at   TIMESTAMPTZ NOT NULL,
    UNIQUE (tenant_id, name)
);

CREATE TABLE tenant_members (
    tenant_id  BIGINT      NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    user_id    BIGINT      NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    role       TEXT        NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant_id, user_id)
);
CREATE INDEX tenant_members_user ON tenant_members (user_id);

INSERT INTO tenants (name, created_at, updated_at)
SELECT name, date_trunc('microseconds', now()), date_trunc('microseconds', now())
FROM (SELECT tenant AS name FROM users UNION SELECT tenant FROM tasks UNION SELECT tenant FROM quotas) n
WHERE name <> '';

INSERT INTO projects (tenant_id, name, created_at, updated_at)
SELECT t.id, p.project, t.created_at, t.created_at
FROM (SELECT tenant, project FROM tasks UNION SELECT tenant, project FROM quotas) p
JOIN tenants t ON t.name = p.tenant
WHERE p.project <> '';

INSERT INTO tenant_members (tenant_id, user_id, role, created_at)
SELECT t.id, u.id, CASE u.role WHEN 'viewer' THEN 'viewer' ELSE 'member' END, t.created_at
FROM users u JOIN tenants t ON t.name = u.tenant;

-- API keys scoped to one tenant ('' = not scoped).
ALTER TABLE api_keys ADD COLUMN tenant TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE api_keys DROP COLUMN tenant;
DROP TABLE tenant_members;
DROP TABLE projects;
DROP TABLE tenants;
