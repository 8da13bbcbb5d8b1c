-- Initial control-plane schema: users, credentials, tasks with their event
-- history, audit log, settings. Later migrations add nodes, devices, the
-- allocation ledger, assignments, quotas, plugin configuration and alerts.

-- +goose Up
CREATE TABLE users (
    id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    username      TEXT        NOT NULL UNIQUE,
    display_name  TEXT        NOT NULL DEFAULT '',
    email         TEXT        NOT NULL DEFAULT '',
    role          TEXT        NOT NULL,
    status        TEXT        NOT NULL,
    tenant        TEXT        NOT NULL DEFAULT '',
    password_hash TEXT        NOT NULL DEFAULT '',
    failed_logins INTEGER     NOT NULL DEFAULT 0,
    locked_until  TIMESTAMPTZ,
    created_at    TIMESTAMPTZ NOT NULL,
    updated_at    TIMESTAMPTZ NOT NULL
);

CREATE TABLE refresh_tokens (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id     BIGINT      NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    family      TEXT        NOT NULL,
    token_hash  TEXT        NOT NULL UNIQUE,
    expires_at  TIMESTAMPTZ NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL,
    rotated_at  TIMESTAMPTZ,
    revoked_at  TIMESTAMPTZ,
    replaced_by BIGINT      NOT NULL DEFAULT 0
);
CREATE INDEX refresh_tokens_family ON refresh_tokens (family);
CREATE INDEX refresh_tokens_user ON refresh_tokens (user_id);

CREATE TABLE api_keys (
    id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name         TEXT        NOT NULL,
    prefix       TEXT        NOT NULL UNIQUE,
    secret_hash  TEXT        NOT NULL,
    role         TEXT        NOT NULL,
    owner_id     BIGINT      REFERENCES users(id) ON DELETE CASCADE,
    node_id      TEXT        NOT NULL DEFAULT '',
    expires_at   TIMESTAMPTZ,
    last_used_at TIMESTAMPTZ,
    revoked_at   TIMESTAMPTZ,
    created_at   TIMESTAMPTZ NOT NULL
);
CREATE INDEX api_keys_owner ON api_keys (owner_id);

-- Tasks keep owner (username) denormalised so that history survives a user's
-- deletion (owner_id becomes NULL).
CREATE TABLE tasks (
    id              BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name            TEXT        NOT NULL,
    command         JSONB       NOT NULL DEFAULT '[]',
    image           TEXT        NOT NULL DEFAULT '',
    args            JSONB       NOT NULL DEFAULT '[]',
    env             JSONB       NOT NULL DEFAULT '{}',
    device_count    INTEGER     NOT NULL DEFAULT 0,
    memory_mib      INTEGER     NOT NULL DEFAULT 0,
    compute_percent INTEGER     NOT NULL DEFAULT 0,
    vendor          TEXT        NOT NULL DEFAULT '',
    models          JSONB       NOT NULL DEFAULT '[]',
    qos             TEXT        NOT NULL,
    priority        INTEGER     NOT NULL DEFAULT 0,
    timeout_seconds INTEGER     NOT NULL DEFAULT 0,
    max_retries     INTEGER     NOT NULL DEFAULT 0,
    labels          JSONB       NOT NULL DEFAULT '{}',
    tenant          TEXT        NOT NULL DEFAULT '',
    project         TEXT        NOT NULL DEFAULT '',
    cpu_milli       INTEGER     NOT NULL DEFAULT 0,
    host_memory_mib INTEGER     NOT NULL DEFAULT 0,
    rdma            BOOLEAN     NOT NULL DEFAULT FALSE,
    gang            TEXT        NOT NULL DEFAULT '',
    gang_size       INTEGER     NOT NULL DEFAULT 0,
    state           TEXT        NOT NULL,
    owner_id        BIGINT      REFERENCES users(id) ON DELETE SET NULL,
    owner           TEXT        NOT NULL DEFAULT '',
    attempt         INTEGER     NOT NULL DEFAULT 0,
    node_id         TEXT        NOT NULL DEFAULT '',
    exit_code       INTEGER,
    reason          TEXT        NOT NULL DEFAULT '',
    created_at      TIMESTAMPTZ NOT NULL,
    updated_at      TIMESTAMPTZ NOT NULL,
    started_at      TIMESTAMPTZ,
    finished_at     TIMESTAMPTZ
);
CREATE INDEX tasks_state ON tasks (state, id);
CREATE INDEX tasks_owner ON tasks (owner_id, id);
CREATE INDEX tasks_tenant ON tasks (tenant, id);
CREATE INDEX tasks_created ON tasks (created_at);
CREATE INDEX tasks_labels ON tasks USING GIN (labels jsonb_path_ops);

CREATE TABLE task_events (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    task_id    BIGINT      NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    from_state TEXT        NOT NULL,
    to_state   TEXT        NOT NULL,
    reason     TEXT        NOT NULL DEFAULT '',
    actor      TEXT        NOT NULL DEFAULT '',
    at         TIMESTAMPTZ NOT NULL
);
CREATE INDEX task_events_task ON task_events (task_id, id);

CREATE TABLE audit_log (
    id        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at        TIMESTAMPTZ NOT NULL,
    actor     TEXT        NOT NULL DEFAULT '',
    module    TEXT        NOT NULL,
    level     TEXT        NOT NULL,
    action    TEXT        NOT NULL,
    target    TEXT        NOT NULL DEFAULT '',
    source_ip TEXT        NOT NULL DEFAULT '',
    result    TEXT        NOT NULL DEFAULT '',
    detail    TEXT        NOT NULL DEFAULT ''
);
CREATE INDEX audit_log_at ON audit_log (at);
CREATE INDEX audit_log_module ON audit_log (module, id);
CREATE INDEX audit_log_actor ON audit_log (actor, id);

CREATE TABLE settings (
    key        TEXT PRIMARY KEY,
    value      TEXT        NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);

-- +goose Down
DROP TABLE settings;
DROP TABLE audit_log;
DROP TABLE task_events;
DROP TABLE tasks;
DROP TABLE api_keys;
DROP TABLE refresh_tokens;
DROP TABLE users;
