-- Presence: per (participant, field) the latest writer's value, or a tombstone (value NULL) so that an
-- older write arriving late cannot bring a removed field back. Rows expire with their participant.
CREATE TABLE a2_presence (
    contract    text        NOT NULL,
    session_id  text        NOT NULL,
    participant text        NOT NULL,
    field       text        NOT NULL,
    value       jsonb,
    at          timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL,
    PRIMARY KEY (contract, session_id, participant, field)
);

CREATE INDEX a2_presence_expiry ON a2_presence (expires_at);
