-- Less written per usage record, so that metering costs less beside
-- scheduling:
--
-- usage_records loses its day index, which served only the record listing
-- of every tenant over a period (the all-tenant record export, which now
-- scans). Reports read the daily rollups, the top tasks' exact sums the
-- (task, day) index, the not-yet-metered check the primary key
-- (interval_id, day), tenant and user scopes the (tenant, day) and
-- (owner_id, day) indexes.
--
-- usage_task_daily becomes append-only: a metering batch adds one row per
-- day, task, class and tenant it metered (a plain insert, no upsert), and
-- the ranking sums the rows of a task as it did. Its key becomes a plain
-- (day, task_id) index (SQLite rebuilds the table to drop a primary key).

-- +goose Up
DROP INDEX usage_records_day;
CREATE TABLE usage_task_daily_new (
    day              TEXT    NOT NULL,
    task_id          BIGINT  NOT NULL,
    vendor           TEXT    NOT NULL,
    model            TEXT    NOT NULL,
    qos              TEXT    NOT NULL,
    tenant           TEXT    NOT NULL,
    device_milli_ms  BIGINT  NOT NULL,
    memory_mib_ms    BIGINT  NOT NULL,
    compute_milli_ms BIGINT  NOT NULL
);
INSERT INTO usage_task_daily_new SELECT day, task_id, vendor, model, qos, tenant, device_milli_ms, memory_mib_ms,
    compute_milli_ms FROM usage_task_daily;
DROP TABLE usage_task_daily;
ALTER TABLE usage_task_daily_new RENAME TO usage_task_daily;
CREATE INDEX usage_task_daily_day ON usage_task_daily (day, task_id);
CREATE INDEX usage_task_daily_tenant ON usage_task_daily (tenant, day);

-- +goose Down
CREATE TABLE usage_task_daily_old (
    day              TEXT    NOT NULL,
    task_id          BIGINT  NOT NULL,
    vendor           TEXT    NOT NULL,
    model            TEXT    NOT NULL,
    qos              TEXT    NOT NULL,
    tenant           TEXT    NOT NULL,
    device_milli_ms  BIGINT  NOT NULL,
    memory_mib_ms    BIGINT  NOT NULL,
    compute_milli_ms BIGINT  NOT NULL,
    PRIMARY KEY (day, task_id, vendor, model, qos, tenant)
);
INSERT INTO usage_task_daily_old SELECT day, task_id, vendor, model, qos, tenant, SUM(device_milli_ms),
    SUM(memory_mib_ms), SUM(compute_milli_ms) FROM usage_task_daily GROUP BY day, task_id, vendor, model, qos, tenant;
DROP TABLE usage_task_daily;
ALTER TABLE usage_task_daily_old RENAME TO usage_task_daily;
CREATE INDEX usage_task_daily_tenant ON usage_task_daily (tenant, day);
CREATE INDEX usage_records_day ON usage_records (day);
