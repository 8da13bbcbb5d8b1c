-- Nodes and their agents (issue 5): enrolled nodes with their inventory,
-- one-time bootstrap tokens, the per-node assignment queue (tasks to run or
-- cancel, management commands) and shipped task logs. Times are INTEGER unix
-- microseconds (UTC) as in 00001.

-- +goose Up
CREATE TABLE nodes (
    id              TEXT    PRIMARY KEY,
    hostname        TEXT    NOT NULL,
    os              TEXT    NOT NULL DEFAULT '',
    arch            TEXT    NOT NULL DEFAULT '',
    version         TEXT    NOT NULL DEFAULT '',
    labels          TEXT    NOT NULL DEFAULT '{}',
    state           TEXT    NOT NULL,
    cordoned        INTEGER NOT NULL DEFAULT 0,
    draining        INTEGER NOT NULL DEFAULT 0,
    health          TEXT    NOT NULL DEFAULT '',
    cpu_count       INTEGER NOT NULL DEFAULT 0,
    memory_total_mib INTEGER NOT NULL DEFAULT 0,
    memory_free_mib INTEGER NOT NULL DEFAULT 0,
    inventory       TEXT    NOT NULL DEFAULT '[]',
    running         TEXT    NOT NULL DEFAULT '[]',
    api_key_prefix  TEXT    NOT NULL DEFAULT '',
    last_heartbeat  INTEGER,
    last_status_seq INTEGER NOT NULL DEFAULT 0,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
);
CREATE INDEX nodes_state ON nodes (state, last_heartbeat);

CREATE TABLE bootstrap_tokens (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    prefix      TEXT    NOT NULL,
    token_hash  TEXT    NOT NULL UNIQUE,
    description TEXT    NOT NULL DEFAULT '',
    created_by  INTEGER NOT NULL DEFAULT 0,
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL,
    used_at     INTEGER,
    node_id     TEXT    NOT NULL DEFAULT ''
);

CREATE TABLE assignments (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    node_id    TEXT    NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
    kind       TEXT    NOT NULL,
    task_id    INTEGER NOT NULL DEFAULT 0,
    attempt    INTEGER NOT NULL DEFAULT 0,
    payload    TEXT    NOT NULL DEFAULT '{}',
    result     TEXT,
    created_at INTEGER NOT NULL,
    done_at    INTEGER
);
CREATE INDEX assignments_open ON assignments (node_id, done_at, id);
CREATE INDEX assignments_task ON assignments (task_id, attempt);

CREATE TABLE task_logs (
    task_id INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    attempt INTEGER NOT NULL,
    stream  TEXT    NOT NULL,
    offset  INTEGER NOT NULL,
    data    BLOB    NOT NULL,
    PRIMARY KEY (task_id, attempt, stream, offset)
);

-- +goose Down
DROP TABLE task_logs;
DROP TABLE assignments;
DROP TABLE bootstrap_tokens;
DROP TABLE nodes;
