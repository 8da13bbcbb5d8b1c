-- Measured usage: what a record's slice actually used, from the device
-- metrics, stored with the record when it is metered (so reports never
-- query metrics and past reports never change): the milliseconds covered
-- by samples, Σ duration × attributed utilisation (thousandths of a device)
-- and Σ duration × attributed device memory in use (MiB). The node index on
-- allocation_history finds what shared a device over an interval.
--
-- usage_daily is the daily rollup the meter keeps in the transaction that
-- inserts records (sums per day, vendor, model, QoS, tenant, project and
-- owner; exact integers), so reports read a few rows per day rather than
-- every record; the task index serves the top tasks.

-- +goose Up
ALTER TABLE usage_records ADD COLUMN measured_ms BIGINT NOT NULL DEFAULT 0;
ALTER TABLE usage_records ADD COLUMN measured_compute_milli_ms BIGINT NOT NULL DEFAULT 0;
ALTER TABLE usage_records ADD COLUMN measured_memory_mib_ms BIGINT NOT NULL DEFAULT 0;
CREATE INDEX allocation_history_node ON allocation_history (node_id, released_at);
CREATE INDEX usage_records_task ON usage_records (task_id);

CREATE TABLE usage_daily (
    day                       TEXT   NOT NULL,
    vendor                    TEXT   NOT NULL,
    model                     TEXT   NOT NULL,
    qos                       TEXT   NOT NULL,
    tenant                    TEXT   NOT NULL,
    project                   TEXT   NOT NULL,
    owner                     TEXT   NOT NULL,
    slice_ms                  BIGINT NOT NULL,
    device_milli_ms           BIGINT NOT NULL,
    memory_mib_ms             BIGINT NOT NULL,
    compute_milli_ms          BIGINT NOT NULL,
    measured_ms               BIGINT NOT NULL,
    measured_compute_milli_ms BIGINT NOT NULL,
    measured_memory_mib_ms    BIGINT NOT NULL,
    covered_compute_milli_ms  BIGINT NOT NULL,
    covered_memory_mib_ms     BIGINT NOT NULL,
    PRIMARY KEY (day, vendor, model, qos, tenant, project, owner)
);
CREATE INDEX usage_daily_tenant ON usage_daily (tenant, day);
INSERT INTO usage_daily SELECT day, vendor, model, qos, tenant, project, owner, SUM(duration_ms),
    SUM(duration_ms * share_milli), SUM(duration_ms * memory_mib), SUM(duration_ms * compute_milli), 0, 0, 0, 0, 0
    FROM usage_records GROUP BY day, vendor, model, qos, tenant, project, owner;

-- +goose Down
DROP TABLE usage_daily;
DROP INDEX usage_records_task;
DROP INDEX allocation_history_node;
ALTER TABLE usage_records DROP COLUMN measured_memory_mib_ms;
ALTER TABLE usage_records DROP COLUMN measured_compute_milli_ms;
ALTER TABLE usage_records DROP COLUMN measured_ms;
