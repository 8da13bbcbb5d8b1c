-- usage_task_daily is the per-task daily rollup that ranks a report's
-- heaviest tasks: per day, task, class and tenant, Σ duration × share,
-- × device memory and × compute (exact integers), so a month ranks from one
-- narrow row per task and day rather than every record. The meter adds to
-- it in the transaction that inserts records, from the records inserted.
-- Existing databases: filled from the records already stored. The chosen
-- tasks' exact sums read their records through the (task, day) index, one
-- range per task, never the whole period's day index.

-- +goose Up
CREATE TABLE usage_task_daily (
    day              TEXT   NOT NULL,
    task_id          BIGINT NOT NULL,
    vendor           TEXT   NOT NULL,
    model            TEXT   NOT NULL,
    qos              TEXT   NOT NULL,
    tenant           TEXT   NOT NULL,
    device_milli_ms  BIGINT NOT NULL,
    memory_mib_ms    BIGINT NOT NULL,
    compute_milli_ms BIGINT NOT NULL,
    PRIMARY KEY (day, task_id, vendor, model, qos, tenant)
);
CREATE INDEX usage_task_daily_tenant ON usage_task_daily (tenant, day);
INSERT INTO usage_task_daily SELECT day, task_id, vendor, model, qos, tenant, SUM(duration_ms * share_milli),
    SUM(duration_ms * memory_mib), SUM(duration_ms * compute_milli)
    FROM usage_records GROUP BY day, task_id, vendor, model, qos, tenant;
CREATE INDEX usage_records_task_day ON usage_records (task_id, day);
DROP INDEX usage_records_task;

-- +goose Down
CREATE INDEX usage_records_task ON usage_records (task_id);
DROP INDEX usage_records_task_day;
DROP TABLE usage_task_daily;
