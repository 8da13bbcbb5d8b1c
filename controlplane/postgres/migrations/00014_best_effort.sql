-- Silver best-effort: a Silver task may allow running, unenforced, on a
-- device whose node has neither MPS nor HAMi-core when no enforcing device
-- can take it (TaskSpec.AllowBestEffort).

-- +goose Up
ALTER TABLE tasks ADD COLUMN allow_best_effort BOOLEAN NOT NULL DEFAULT FALSE;

-- +goose Down
ALTER TABLE tasks DROP COLUMN allow_best_effort;
