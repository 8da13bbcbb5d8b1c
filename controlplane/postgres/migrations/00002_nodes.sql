-- Nodes and their agents (issue 5): enrolled nodes with their inventory,
-- one-time bootstrap tokens, the per-node assignment queue (tasks to run or
-- cancel, management commands) and shipped task logs. JSON documents are
-- JSONB (the SQLite store keeps them as text); times are TIMESTAMPTZ.

-- +goose Up
CREATE TABLE nodes (
    id               TEXT        PRIMARY KEY,
    hostname         TEXT        NOT NULL,
    os               TEXT        NOT NULL DEFAULT '',
    arch             TEXT        NOT NULL DEFAULT '',
    version          TEXT        NOT NULL DEFAULT '',
    labels           JSONB       NOT NULL DEFAULT '{}',
    state            TEXT        NOT NULL,
    cordoned         BOOLEAN     NOT NULL DEFAULT FALSE,
    draining         BOOLEAN     NOT NULL DEFAULT FALSE,
    health           TEXT        NOT NULL DEFAULT '',
    cpu_count        INTEGER     NOT NULL DEFAULT 0,
    memory_total_mib BIGINT      NOT NULL DEFAULT 0,
    memory_free_mib  BIGINT      NOT NULL DEFAULT 0,
    inventory        JSONB       NOT NULL DEFAULT '[]',
    running          JSONB       NOT NULL DEFAULT '[]',
    api_key_prefix   TEXT        NOT NULL DEFAULT '',
    last_heartbeat   TIMESTAMPTZ,
    last_status_seq  BIGINT      NOT NULL DEFAULT 0,
    created_at       TIMESTAMPTZ NOT NULL,
    updated_at       TIMESTAMPTZ NOT NULL
);
-- MarkNodesOffline scans online nodes by heartbeat.
CREATE INDEX nodes_state ON nodes (state, last_heartbeat);
-- ListNodes' vendor filter (inventory @> '[{"vendor": …}]').
CREATE INDEX nodes_inventory ON nodes USING GIN (inventory jsonb_path_ops);

CREATE TABLE bootstrap_tokens (
    id          BIGINT      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    prefix      TEXT        NOT NULL,
    token_hash  TEXT        NOT NULL UNIQUE,
    description TEXT        NOT NULL DEFAULT '',
    created_by  BIGINT      NOT NULL DEFAULT 0,
    created_at  TIMESTAMPTZ NOT NULL,
    expires_at  TIMESTAMPTZ NOT NULL,
    used_at     TIMESTAMPTZ,
    node_id     TEXT        NOT NULL DEFAULT ''
);

CREATE TABLE assignments (
    id         BIGINT      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    node_id    TEXT        NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
    kind       TEXT        NOT NULL,
    task_id    BIGINT      NOT NULL DEFAULT 0,
    attempt    INTEGER     NOT NULL DEFAULT 0,
    payload    JSONB       NOT NULL DEFAULT '{}',
    result     JSONB,
    created_at TIMESTAMPTZ NOT NULL,
    done_at    TIMESTAMPTZ
);
-- A node's open queue (the long-poll reads it on every wake-up).
CREATE INDEX assignments_open ON assignments (node_id, id) WHERE done_at IS NULL;
CREATE INDEX assignments_task ON assignments (task_id, attempt);
-- RunsToStop: recent runs the agent has not reported an end of.
CREATE INDEX assignments_unfinished_runs ON assignments (created_at) WHERE kind = 'run' AND result IS NULL;

-- byte_offset is SQLite's "offset" (a reserved word in PostgreSQL).
CREATE TABLE task_logs (
    task_id     BIGINT  NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    attempt     INTEGER NOT NULL,
    stream      TEXT    NOT NULL,
    byte_offset BIGINT  NOT NULL,
    data        BYTEA   NOT NULL,
    PRIMARY KEY (task_id, attempt, stream, byte_offset)
);

-- +goose Down
DROP TABLE task_logs;
DROP TABLE assignments;
DROP TABLE bootstrap_tokens;
DROP TABLE nodes;
