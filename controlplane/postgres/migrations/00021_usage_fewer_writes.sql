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
-- (day, task_id) index.

-- +goose Up
DROP INDEX usage_records_day;
ALTER TABLE usage_task_daily DROP CONSTRAINT usage_task_daily_pkey;
CREATE INDEX usage_task_daily_day ON usage_task_daily (day, task_id);

-- +goose Down
CREATE TABLE usage_task_daily_merged AS SELECT day, task_id, vendor, model, qos, tenant,
    SUM(device_milli_ms)::BIGINT AS device_milli_ms, SUM(memory_mib_ms)::BIGINT AS memory_mib_ms,
    SUM(compute_milli_ms)::BIGINT AS compute_milli_ms
    FROM usage_task_daily GROUP BY day, task_id, vendor, model, qos, tenant;
DELETE FROM usage_task_daily;
INSERT INTO usage_task_daily SELECT * FROM usage_task_daily_merged;
DROP TABLE usage_task_daily_merged;
DROP INDEX usage_task_daily_day;
ALTER TABLE usage_task_daily ADD PRIMARY KEY (day, task_id, vendor, model, qos, tenant);
CREATE INDEX usage_records_day ON usage_records (day);
