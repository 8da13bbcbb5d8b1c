-- External identities: a user created by an LDAP or OIDC login is marked
-- with where it came from (auth_source "ldap" or "oidc:<provider>"; "" for
-- a local account with a password) and its stable id there (the entry's DN,
-- or the provider's subject), so a later login finds the same account and
-- a local password never opens it.

-- +goose Up
ALTER TABLE users ADD COLUMN auth_source TEXT NOT NULL DEFAULT '';
ALTER TABLE users ADD COLUMN external_id TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE users DROP COLUMN external_id;
ALTER TABLE users DROP COLUMN auth_source;
