-- Measured usage: what a record's slice actually used, from the device
-- metrics, stored with the record when it is metered (so reports never
-- query metrics and past reports never change): the milliseconds covered
-- by samples, Σ duration × attributed utilisation (thousandths of a device)
-- and Σ duration × attributed device memory in use (MiB). The node index on
-- allocation_history finds what shared a device over an interval.

-- +goose Up
ALTER TABLE usage_records ADD COLUMN measured_ms BIGINT NOT NULL DEFAULT 0;
ALTER TABLE usage_records ADD COLUMN measured_compute_milli_ms BIGINT NOT NULL DEFAULT 0;
ALTER TABLE usage_records ADD COLUMN measured_memory_mib_ms BIGINT NOT NULL DEFAULT 0;
CREATE INDEX allocation_history_node ON allocation_history (node_id, released_at);

-- +goose Down
DROP INDEX allocation_history_node;
ALTER TABLE usage_records DROP COLUMN measured_memory_mib_ms;
ALTER TABLE usage_records DROP COLUMN measured_compute_milli_ms;
ALTER TABLE usage_records DROP COLUMN measured_ms;
