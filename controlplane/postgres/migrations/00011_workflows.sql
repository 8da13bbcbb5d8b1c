-- Workflows: DAGs of steps whose work is ordinary tasks. A workflow keeps
-- its validated spec (JSON); each step instance (a spec step, or one item
-- of a fan-out) is a row whose task is created in the same transaction
-- that marks it running, so a step's task exists at most once. Events
-- record every workflow and step state change. task_outputs holds the
-- small result values a task attempt wrote. Times are TIMESTAMPTZ (UTC).

-- +goose Up
CREATE TABLE workflows (
    id               BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name             TEXT    NOT NULL,
    spec             JSONB   NOT NULL,
    state            TEXT    NOT NULL,
    owner_id         BIGINT REFERENCES users(id) ON DELETE SET NULL,
    owner            TEXT    NOT NULL DEFAULT '',
    tenant           TEXT    NOT NULL DEFAULT '',
    project          TEXT    NOT NULL DEFAULT '',
    priority         INTEGER NOT NULL DEFAULT 0,
    reason           TEXT    NOT NULL DEFAULT '',
    generation       INTEGER NOT NULL DEFAULT 0,
    resubmitted_from BIGINT  NOT NULL DEFAULT 0,
    created_at       TIMESTAMPTZ NOT NULL,
    updated_at       TIMESTAMPTZ NOT NULL,
    started_at       TIMESTAMPTZ,
    finished_at      TIMESTAMPTZ
);
CREATE INDEX workflows_state ON workflows (state, id);
CREATE INDEX workflows_owner ON workflows (owner_id, id);

CREATE TABLE workflow_steps (
    workflow_id BIGINT NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
    position    INTEGER NOT NULL,
    name        TEXT    NOT NULL,
    step        TEXT    NOT NULL,
    item_index  INTEGER NOT NULL DEFAULT -1,
    state       TEXT    NOT NULL,
    task_id     BIGINT REFERENCES tasks(id) ON DELETE SET NULL,
    generation  INTEGER NOT NULL DEFAULT 0,
    exit_code   INTEGER,
    outputs     JSONB   NOT NULL DEFAULT '{}',
    reason      TEXT    NOT NULL DEFAULT '',
    updated_at  TIMESTAMPTZ NOT NULL,
    started_at  TIMESTAMPTZ,
    finished_at TIMESTAMPTZ,
    PRIMARY KEY (workflow_id, name)
);
CREATE INDEX workflow_steps_running ON workflow_steps (workflow_id) WHERE state = 'running';
CREATE INDEX workflow_steps_task ON workflow_steps (task_id);

CREATE TABLE workflow_events (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workflow_id BIGINT NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
    step        TEXT    NOT NULL DEFAULT '',
    from_state  TEXT    NOT NULL,
    to_state    TEXT    NOT NULL,
    reason      TEXT    NOT NULL DEFAULT '',
    actor       TEXT    NOT NULL DEFAULT '',
    at          TIMESTAMPTZ NOT NULL
);
CREATE INDEX workflow_events_workflow ON workflow_events (workflow_id, id);

CREATE TABLE task_outputs (
    task_id BIGINT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    attempt INTEGER NOT NULL,
    outputs JSONB   NOT NULL,
    PRIMARY KEY (task_id, attempt)
);

-- +goose Down
DROP TABLE task_outputs;
DROP TABLE workflow_events;
DROP TABLE workflow_steps;
DROP TABLE workflows;
