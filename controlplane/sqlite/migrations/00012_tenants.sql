-- Tenants and projects as objects: tenants (name is the key tasks, quotas
-- and usage name; display_name is what a rename changes), their projects,
-- and memberships with a per-tenant role (tenant-admin, member, viewer).
-- Existing free-text tenants (users, tasks, quotas) become tenant rows,
-- their (tenant, project) pairs project rows, and each user with a tenant
-- a member of it (viewers as viewer, everyone else as member). API keys
-- gain a tenant column for keys scoped to one tenant. Times are
-- INTEGER unix microseconds (UTC) as in 00001.

-- +goose Up
CREATE TABLE tenants (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    name          TEXT    NOT NULL UNIQUE,
    display_name  TEXT    NOT NULL DEFAULT '',
    disabled      INTEGER NOT NULL DEFAULT 0,
    node_selector TEXT    NOT NULL DEFAULT '{}',
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL
);

CREATE TABLE projects (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id    INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    name         TEXT    NOT NULL,
    display_name TEXT    NOT NULL DEFAULT '',
    disabled     INTEGER NOT NULL DEFAULT 0,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    UNIQUE (tenant_id, name)
);

CREATE TABLE tenant_members (
    tenant_id  INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    user_id    INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    role       TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, user_id)
);
CREATE INDEX tenant_members_user ON tenant_members (user_id);

INSERT INTO tenants (name, created_at, updated_at)
SELECT name, CAST(strftime('%s', 'now') AS INTEGER) * 1000000, CAST(strftime('%s', 'now') AS INTEGER) * 1000000
FROM (SELECT tenant AS name FROM users UNION SELECT tenant FROM tasks UNION SELECT tenant FROM quotas)
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
