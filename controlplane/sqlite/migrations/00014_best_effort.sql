-- Silver best-effort: a Silver task may allow running, unenforced, on a
-- device whose node has neither MPS nor HAMi-core when no enforcing device
-- can take it (TaskSpec.AllowBestEffort).

-- +goose Up
ALTER TABLE tasks ADD COLUMN allow_best_effort INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE tasks DROP COLUMN allow_best_effort;
