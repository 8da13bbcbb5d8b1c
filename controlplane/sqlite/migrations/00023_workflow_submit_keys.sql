-- Idempotent workflow submission: a workflow submitted with an
-- Idempotency-Key stores the key and a hash of its request, so that a
-- client retrying the submission (a server died before answering, a
-- second click) is answered with the workflow the first request created
-- instead of a second copy. Keys are per owner; retention clears them
-- after a day (the same rule as the tasks' keys), after which a key may
-- be used again. NULL: submitted without a key.

-- +goose Up
ALTER TABLE workflows ADD COLUMN submit_key TEXT;
ALTER TABLE workflows ADD COLUMN submit_hash TEXT;
CREATE UNIQUE INDEX workflows_submit_key ON workflows (owner_id, submit_key) WHERE submit_key IS NOT NULL;

-- +goose Down
DROP INDEX workflows_submit_key;
ALTER TABLE workflows DROP COLUMN submit_hash;
ALTER TABLE workflows DROP COLUMN submit_key;
