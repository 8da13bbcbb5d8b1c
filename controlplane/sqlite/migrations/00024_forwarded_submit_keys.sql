-- Idempotent submission to a hub: a task placed through the hub with an
-- Idempotency-Key stores the key and a hash of its request with its
-- forwarded record, so that a client retrying (a hub server died before
-- answering) gets the record the first request made instead of a second
-- task on a member. Keys are per owner; retention clears them after a day,
-- as it does the tasks' and workflows' keys. NULL: submitted without one.

-- +goose Up
ALTER TABLE forwarded_tasks ADD COLUMN submit_key TEXT;
ALTER TABLE forwarded_tasks ADD COLUMN submit_hash TEXT;
CREATE UNIQUE INDEX forwarded_tasks_submit_key ON forwarded_tasks (owner_id, submit_key) WHERE submit_key IS NOT NULL;

-- +goose Down
DROP INDEX forwarded_tasks_submit_key;
ALTER TABLE forwarded_tasks DROP COLUMN submit_hash;
ALTER TABLE forwarded_tasks DROP COLUMN submit_key;
