-- Fewer indexes on usage_records, so that metering writes less per record:
-- the day index served only the record listing of every tenant over a
-- period (the all-tenant record export). Reports read the daily rollups,
-- the top tasks the (task, day) index, the not-yet-metered check the
-- primary key (interval_id, day), tenant and user scopes their (tenant,
-- day) and (owner_id, day) indexes; the all-tenant export now scans.

-- +goose Up
DROP INDEX usage_records_day;

-- +goose Down
CREATE INDEX usage_records_day ON usage_records (day);
