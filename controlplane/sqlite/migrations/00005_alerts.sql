-- Alerting: custom rules (shipped rules are files), alert instances with
-- their history, silences, notification channels and the notification
-- outbox. Maps are JSON text; times are INTEGER unix microseconds (UTC).

-- +goose Up
CREATE TABLE alert_rules (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant          TEXT    NOT NULL DEFAULT '',
    name            TEXT    NOT NULL,
    expr            TEXT    NOT NULL,
    for_ms          INTEGER NOT NULL DEFAULT 0,
    keep_firing_ms  INTEGER NOT NULL DEFAULT 0,
    level           TEXT    NOT NULL,
    labels          TEXT    NOT NULL DEFAULT '{}',
    annotations     TEXT    NOT NULL DEFAULT '{}',
    enabled         INTEGER NOT NULL DEFAULT 1,
    created_by      TEXT    NOT NULL DEFAULT '',
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    UNIQUE (tenant, name)
);

-- open_fingerprint is the fingerprint while the instance is open and NULL
-- once resolved: the unique index allows one open instance per label set
-- and any number of resolved ones.
CREATE TABLE alerts (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    fingerprint      TEXT    NOT NULL,
    open_fingerprint TEXT    UNIQUE,
    rule             TEXT    NOT NULL,
    rule_id          INTEGER NOT NULL DEFAULT 0,
    tenant           TEXT    NOT NULL DEFAULT '',
    node             TEXT    NOT NULL DEFAULT '',
    level            TEXT    NOT NULL,
    state            TEXT    NOT NULL,
    labels           TEXT    NOT NULL DEFAULT '{}',
    annotations      TEXT    NOT NULL DEFAULT '{}',
    value            REAL    NOT NULL DEFAULT 0,
    silenced         INTEGER NOT NULL DEFAULT 0,
    active_at        INTEGER NOT NULL,
    fired_at         INTEGER NOT NULL,
    acked_at         INTEGER,
    acked_by         TEXT    NOT NULL DEFAULT '',
    ack_comment      TEXT    NOT NULL DEFAULT '',
    resolved_at      INTEGER,
    resolved_by      TEXT    NOT NULL DEFAULT '',
    resolution       TEXT    NOT NULL DEFAULT '',
    updated_at       INTEGER NOT NULL
);
CREATE INDEX alerts_fired ON alerts (fired_at);
CREATE INDEX alerts_state ON alerts (state, fired_at);

CREATE TABLE alert_events (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    alert_id INTEGER NOT NULL REFERENCES alerts(id) ON DELETE CASCADE,
    state    TEXT    NOT NULL,
    actor    TEXT    NOT NULL DEFAULT '',
    comment  TEXT    NOT NULL DEFAULT '',
    at       INTEGER NOT NULL
);
CREATE INDEX alert_events_alert ON alert_events (alert_id, id);

CREATE TABLE alert_silences (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant     TEXT    NOT NULL DEFAULT '',
    matchers   TEXT    NOT NULL,
    starts_at  INTEGER NOT NULL,
    ends_at    INTEGER NOT NULL,
    comment    TEXT    NOT NULL DEFAULT '',
    created_by TEXT    NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL
);

CREATE TABLE alert_channels (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    name          TEXT    NOT NULL UNIQUE,
    type          TEXT    NOT NULL,
    config        TEXT    NOT NULL DEFAULT '{}',
    levels        TEXT    NOT NULL DEFAULT '[]',
    tenant        TEXT    NOT NULL DEFAULT '',
    enabled       INTEGER NOT NULL DEFAULT 1,
    send_resolved INTEGER NOT NULL DEFAULT 1,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL
);

CREATE TABLE alert_notifications (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    channel_id   INTEGER NOT NULL REFERENCES alert_channels(id) ON DELETE CASCADE,
    alert_id     INTEGER NOT NULL REFERENCES alerts(id) ON DELETE CASCADE,
    kind         TEXT    NOT NULL,
    status       TEXT    NOT NULL,
    attempts     INTEGER NOT NULL DEFAULT 0,
    next_attempt INTEGER NOT NULL,
    last_error   TEXT    NOT NULL DEFAULT '',
    created_at   INTEGER NOT NULL,
    delivered_at INTEGER
);
CREATE INDEX alert_notifications_due ON alert_notifications (status, next_attempt);

-- +goose Down
DROP TABLE alert_notifications;
DROP TABLE alert_channels;
DROP TABLE alert_silences;
DROP TABLE alert_events;
DROP TABLE alerts;
DROP TABLE alert_rules;
