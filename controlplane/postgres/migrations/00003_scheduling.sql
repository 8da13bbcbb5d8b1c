-- Scheduling in the live cluster (issue 7): the allocation ledger (one row
-- per device slice of a placed task attempt), quotas per tenant/project,
-- persisted plugin settings, per-task scheduling state ("why pending",
-- backoff) and leases (one leader runs the scheduler). JSON is JSONB, times
-- TIMESTAMPTZ.

-- +goose Up
CREATE TABLE allocations (
    id              BIGINT      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    task_id         BIGINT      NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    attempt         INTEGER     NOT NULL,
    node_id         TEXT        NOT NULL,
    device_pos      INTEGER     NOT NULL,
    device_index    INTEGER     NOT NULL,
    device_uuid     TEXT        NOT NULL DEFAULT '',
    vendor          TEXT        NOT NULL DEFAULT '',
    model           TEXT        NOT NULL DEFAULT '',
    memory_mib      BIGINT      NOT NULL DEFAULT 0,
    compute_milli   INTEGER     NOT NULL DEFAULT 0,
    qos             TEXT        NOT NULL,
    isolation       TEXT        NOT NULL DEFAULT '',
    profile         TEXT        NOT NULL DEFAULT '',
    part_start      INTEGER     NOT NULL DEFAULT -1,
    cpu_milli       BIGINT      NOT NULL DEFAULT 0,
    host_memory_mib BIGINT      NOT NULL DEFAULT 0,
    tenant          TEXT        NOT NULL DEFAULT '',
    project         TEXT        NOT NULL DEFAULT '',
    priority        INTEGER     NOT NULL DEFAULT 0,
    draining        BOOLEAN     NOT NULL DEFAULT FALSE,
    created_at      TIMESTAMPTZ NOT NULL,
    UNIQUE (task_id, attempt, device_pos)
);
CREATE INDEX allocations_node ON allocations (node_id, device_pos);

CREATE TABLE quotas (
    id              BIGINT      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant          TEXT        NOT NULL,
    project         TEXT        NOT NULL DEFAULT '',
    vendor          TEXT        NOT NULL DEFAULT '',
    devices         BIGINT      NOT NULL DEFAULT 0,
    memory_mib      BIGINT      NOT NULL DEFAULT 0,
    compute_percent BIGINT      NOT NULL DEFAULT 0,
    policy          TEXT        NOT NULL DEFAULT 'queue',
    created_at      TIMESTAMPTZ NOT NULL,
    updated_at      TIMESTAMPTZ NOT NULL,
    UNIQUE (tenant, project, vendor)
);

CREATE TABLE scheduler_plugins (
    name     TEXT             PRIMARY KEY,
    enabled  BOOLEAN          NOT NULL,
    weight   DOUBLE PRECISION NOT NULL,
    position INTEGER          NOT NULL
);

CREATE TABLE task_schedule (
    task_id         BIGINT      PRIMARY KEY REFERENCES tasks(id) ON DELETE CASCADE,
    attempts        INTEGER     NOT NULL DEFAULT 0,
    next_attempt_at TIMESTAMPTZ NOT NULL,
    why             JSONB,
    why_at          TIMESTAMPTZ,
    preemptions     INTEGER     NOT NULL DEFAULT 0,
    final           BOOLEAN     NOT NULL DEFAULT FALSE,
    updated_at      TIMESTAMPTZ NOT NULL
);

-- Several servers share one database: the row is the lock, expires_at is
-- compared with the database's clock (leases.go).
CREATE TABLE leases (
    name       TEXT        PRIMARY KEY,
    holder     TEXT        NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL
);

-- The scheduler's queue scan: ListTasksByState orders by priority, then age.
CREATE INDEX tasks_queue ON tasks (state, priority DESC, created_at, id);

-- +goose Down
DROP INDEX tasks_queue;
DROP TABLE leases;
DROP TABLE task_schedule;
DROP TABLE scheduler_plugins;
DROP TABLE quotas;
DROP TABLE allocations;
