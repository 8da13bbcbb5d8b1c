-- Usage metering and billing: released ledger rows kept as allocation
-- intervals (bind → release), usage records per interval and UTC day (the
-- unique key makes metering idempotent), the price book, closed monthly
-- statements and budgets. Days and price dates are TEXT 'YYYY-MM-DD' (UTC)
-- in both stores so that the same comparisons work in both. Times are INTEGER
-- unix microseconds (UTC) as in 00001.

-- +goose Up
CREATE TABLE allocation_history (
    id              INTEGER PRIMARY KEY, -- the ledger row's id
    task_id         BIGINT      NOT NULL,
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
    draining        INTEGER     NOT NULL DEFAULT 0,
    created_at      INTEGER NOT NULL,
    owner_id        BIGINT,
    owner           TEXT        NOT NULL DEFAULT '',
    released_at     INTEGER NOT NULL,
    metered         INTEGER     NOT NULL DEFAULT 0
);
CREATE INDEX allocation_history_unmetered ON allocation_history (released_at, id) WHERE metered = 0;

CREATE TABLE usage_records (
    interval_id   BIGINT      NOT NULL,
    day           TEXT        NOT NULL,
    start_at      INTEGER NOT NULL,
    end_at        INTEGER NOT NULL,
    duration_ms   BIGINT      NOT NULL,
    task_id       BIGINT      NOT NULL,
    attempt       INTEGER     NOT NULL,
    node_id       TEXT        NOT NULL,
    device_pos    INTEGER     NOT NULL,
    device_uuid   TEXT        NOT NULL DEFAULT '',
    vendor        TEXT        NOT NULL DEFAULT '',
    model         TEXT        NOT NULL DEFAULT '',
    qos           TEXT        NOT NULL,
    tenant        TEXT        NOT NULL DEFAULT '',
    project       TEXT        NOT NULL DEFAULT '',
    owner_id      BIGINT,
    owner         TEXT        NOT NULL DEFAULT '',
    memory_mib    BIGINT      NOT NULL DEFAULT 0,
    compute_milli INTEGER     NOT NULL DEFAULT 0,
    share_milli   INTEGER     NOT NULL DEFAULT 0,
    PRIMARY KEY (interval_id, day)
);
CREATE INDEX usage_records_tenant ON usage_records (tenant, day);
CREATE INDEX usage_records_day ON usage_records (day);
CREATE INDEX usage_records_owner ON usage_records (owner_id, day);

CREATE TABLE price_book (
    id                    INTEGER PRIMARY KEY AUTOINCREMENT,
    vendor                TEXT             NOT NULL DEFAULT '',
    model                 TEXT             NOT NULL DEFAULT '',
    qos                   TEXT             NOT NULL DEFAULT '',
    valid_from            TEXT             NOT NULL,
    valid_to              TEXT             NOT NULL DEFAULT '9999-12-31',
    currency              TEXT             NOT NULL DEFAULT 'CNY',
    device_hour           REAL NOT NULL DEFAULT 0,
    memory_gib_hour       REAL NOT NULL DEFAULT 0,
    compute_percent_hour  REAL NOT NULL DEFAULT 0,
    bronze_discount       REAL NOT NULL DEFAULT 0,
    created_by            TEXT             NOT NULL DEFAULT '',
    created_at            INTEGER      NOT NULL,
    updated_at            INTEGER      NOT NULL
);

CREATE TABLE billing_statements (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant    TEXT             NOT NULL,
    month     TEXT             NOT NULL,
    currency  TEXT             NOT NULL,
    total     REAL NOT NULL,
    report    TEXT             NOT NULL,
    closed_by TEXT             NOT NULL DEFAULT '',
    closed_at INTEGER      NOT NULL,
    UNIQUE (tenant, month)
);

CREATE TABLE budgets (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant     TEXT             NOT NULL,
    project    TEXT             NOT NULL DEFAULT '',
    amount     REAL NOT NULL,
    currency   TEXT             NOT NULL DEFAULT 'CNY',
    hard_stop  TEXT             NOT NULL DEFAULT '',
    created_at INTEGER      NOT NULL,
    updated_at INTEGER      NOT NULL,
    UNIQUE (tenant, project)
);

-- +goose Down
DROP TABLE budgets;
DROP TABLE billing_statements;
DROP TABLE price_book;
DROP TABLE usage_records;
DROP TABLE allocation_history;
