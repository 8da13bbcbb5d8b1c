-- Scheduling in the live cluster (issue 7): the allocation ledger (one row
-- per device slice of a placed task attempt), quotas per tenant/project,
-- persisted plugin settings, per-task scheduling state ("why pending",
-- backoff) and leases (one leader runs the scheduler). Times are INTEGER
-- unix microseconds (UTC) as in 00001.

-- +goose Up
CREATE TABLE allocations (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id        INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    attempt        INTEGER NOT NULL,
    node_id        TEXT    NOT NULL,
    device_pos     INTEGER NOT NULL,
    device_index   INTEGER NOT NULL,
    device_uuid    TEXT    NOT NULL DEFAULT '',
    vendor         TEXT    NOT NULL DEFAULT '',
    model          TEXT    NOT NULL DEFAULT '',
    memory_mib     INTEGER NOT NULL DEFAULT 0,
    compute_milli  INTEGER NOT NULL DEFAULT 0,
    qos            TEXT    NOT NULL,
    isolation      TEXT    NOT NULL DEFAULT '',
    profile        TEXT    NOT NULL DEFAULT '',
    part_start     INTEGER NOT NULL DEFAULT -1,
    cpu_milli      INTEGER NOT NULL DEFAULT 0,
    host_memory_mib INTEGER NOT NULL DEFAULT 0,
    tenant         TEXT    NOT NULL DEFAULT '',
    project        TEXT    NOT NULL DEFAULT '',
    priority       INTEGER NOT NULL DEFAULT 0,
    draining       INTEGER NOT NULL DEFAULT 0,
    created_at     INTEGER NOT NULL,
    UNIQUE (task_id, attempt, device_pos)
);
CREATE INDEX allocations_node ON allocations (node_id, device_pos);

CREATE TABLE quotas (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant          TEXT    NOT NULL,
    project         TEXT    NOT NULL DEFAULT '',
    vendor          TEXT    NOT NULL DEFAULT '',
    devices         INTEGER NOT NULL DEFAULT 0,
    memory_mib      INTEGER NOT NULL DEFAULT 0,
    compute_percent INTEGER NOT NULL DEFAULT 0,
    policy          TEXT    NOT NULL DEFAULT 'queue',
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    UNIQUE (tenant, project, vendor)
);

CREATE TABLE scheduler_plugins (
    name     TEXT    PRIMARY KEY,
    enabled  INTEGER NOT NULL,
    weight   REAL    NOT NULL,
    position INTEGER NOT NULL
);

CREATE TABLE task_schedule (
    task_id         INTEGER PRIMARY KEY REFERENCES tasks(id) ON DELETE CASCADE,
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL DEFAULT 0,
    why             TEXT,
    why_at          INTEGER,
    preemptions     INTEGER NOT NULL DEFAULT 0,
    final           INTEGER NOT NULL DEFAULT 0,
    updated_at      INTEGER NOT NULL
);

CREATE TABLE leases (
    name       TEXT    PRIMARY KEY,
    holder     TEXT    NOT NULL,
    expires_at INTEGER NOT NULL
);

-- +goose Down
DROP TABLE leases;
DROP TABLE task_schedule;
DROP TABLE scheduler_plugins;
DROP TABLE quotas;
DROP TABLE allocations;
