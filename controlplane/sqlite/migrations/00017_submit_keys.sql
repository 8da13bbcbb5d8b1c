-- Idempotent submission: a task may carry the Idempotency-Key its submitter
-- sent and a hash of the request, so a client that retries a submission
-- (its server died before answering) gets the task it already created, not
-- a second one. One key per owner; retention clears keys after a bounded
-- time (retention.Config.SubmitKeyMaxAge), which frees them for reuse.

-- +goose Up
ALTER TABLE tasks ADD COLUMN submit_key TEXT;
ALTER TABLE tasks ADD COLUMN submit_hash TEXT;
CREATE UNIQUE INDEX tasks_submit_key ON tasks (owner_id, submit_key) WHERE submit_key IS NOT NULL;

-- +goose Down
DROP INDEX tasks_submit_key;
ALTER TABLE tasks DROP COLUMN submit_hash;
ALTER TABLE tasks DROP COLUMN submit_key;
