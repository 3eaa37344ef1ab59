-- Every table is keyed first by (contract, session_id), so every hot query touches one session
-- and the schema can be distributed by session.

-- One row per session: the head that appends lock to number events, and where the latest clear is.
CREATE TABLE a2_session (
    contract    text    NOT NULL,
    session_id  text    NOT NULL,
    last_index  bigint  NOT NULL DEFAULT 0,
    clear_index integer NOT NULL DEFAULT 0,
    cleared_at  bigint  NOT NULL DEFAULT 0,
    PRIMARY KEY (contract, session_id)
) WITH (fillfactor = 70);

-- The logs. The unique id makes a retried append a no-op.
CREATE TABLE a2_event (
    contract       text        NOT NULL,
    session_id     text        NOT NULL,
    idx            bigint      NOT NULL,
    id             text        NOT NULL,
    type           text        NOT NULL,
    payload        jsonb       NOT NULL,
    created_at     timestamptz NOT NULL,
    clear_index    integer     NOT NULL,
    cause_consumer text,
    cause_lane     text,
    cause_index    bigint,
    cause_attempt  integer,
    PRIMARY KEY (contract, session_id, idx),
    CONSTRAINT a2_event_id_unique UNIQUE (contract, session_id, id)
);

-- Reducer state every `a2.state.snapshot-every` events.
CREATE TABLE a2_state_snapshot (
    contract   text   NOT NULL,
    session_id text   NOT NULL,
    reducer    text   NOT NULL,
    idx        bigint NOT NULL,
    state      jsonb  NOT NULL,
    PRIMARY KEY (contract, session_id, reducer, idx)
);
