-- Multi-cluster: the member clusters a hub registered (the API key sealed
-- by the hub, the TLS pin, what its leader last polled) and the tasks the
-- hub forwarded to them. A forwarded task names its member by name, so
-- its record outlives the member's removal.

-- +goose Up
CREATE TABLE clusters (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    name           TEXT    NOT NULL UNIQUE,
    url            TEXT    NOT NULL,
    api_key_sealed TEXT    NOT NULL,
    ca_pem         TEXT    NOT NULL DEFAULT '',
    fingerprint    TEXT    NOT NULL DEFAULT '',
    version        TEXT    NOT NULL DEFAULT '',
    status         TEXT    NOT NULL DEFAULT 'unknown',
    last_error     TEXT    NOT NULL DEFAULT '',
    summary        TEXT   NOT NULL DEFAULT '',
    polled_at      INTEGER,
    created_by     TEXT    NOT NULL DEFAULT '',
    created_at     INTEGER NOT NULL,
    updated_at     INTEGER NOT NULL
);

CREATE TABLE forwarded_tasks (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    cluster        TEXT    NOT NULL,
    member_task_id BIGINT  NOT NULL DEFAULT 0,
    name           TEXT    NOT NULL DEFAULT '',
    owner_id       BIGINT  NOT NULL DEFAULT 0,
    owner          TEXT    NOT NULL DEFAULT '',
    tenant         TEXT    NOT NULL DEFAULT '',
    state          TEXT    NOT NULL,
    reason         TEXT    NOT NULL DEFAULT '',
    placement      TEXT    NOT NULL DEFAULT '',
    created_at     INTEGER NOT NULL,
    updated_at     INTEGER NOT NULL,
    finished_at    INTEGER
);
CREATE INDEX forwarded_tasks_cluster ON forwarded_tasks (cluster, state);
CREATE INDEX forwarded_tasks_owner ON forwarded_tasks (owner_id, id);

-- +goose Down
DROP TABLE forwarded_tasks;
DROP TABLE clusters;
