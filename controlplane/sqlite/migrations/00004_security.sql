-- Security hardening: a task's secret environment (handed only to the agent
-- that runs it, never returned by the API), the number of successive
-- lockouts of an account (each one lasts longer), and an index on when tasks
-- finished so retention finds the oldest finished tasks without a scan.

-- +goose Up
ALTER TABLE tasks ADD COLUMN secret_env TEXT NOT NULL DEFAULT '{}';
ALTER TABLE users ADD COLUMN lockouts INTEGER NOT NULL DEFAULT 0;
CREATE INDEX tasks_finished ON tasks (finished_at);

-- +goose Down
DROP INDEX tasks_finished;
ALTER TABLE users DROP COLUMN lockouts;
ALTER TABLE tasks DROP COLUMN secret_env;
