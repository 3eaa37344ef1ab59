-- Consumer work. Times are the instances' clocks (leases, back-offs); NULL due_at means "now".

-- One row per unit of an independent or keyed consumer: a matching event not yet done. A done
-- unit is deleted; a dead-lettered one stays (dead) and, in a keyed lane, blocks the units after it.
CREATE TABLE a2_work (
    contract    text        NOT NULL,
    session_id  text        NOT NULL,
    consumer    text        NOT NULL,
    idx         bigint      NOT NULL,
    lane_key    text,
    attempt     integer     NOT NULL DEFAULT 0,
    failures    integer     NOT NULL DEFAULT 0,
    due_at      timestamptz,
    claim       uuid,
    lease_until timestamptz,
    dead        boolean     NOT NULL DEFAULT false,
    last_error  text,
    failed_at   timestamptz,
    PRIMARY KEY (contract, session_id, consumer, idx)
);
CREATE INDEX a2_work_lane ON a2_work (contract, session_id, consumer, lane_key, idx) WHERE lane_key IS NOT NULL;
CREATE INDEX a2_work_pending ON a2_work (due_at) WHERE NOT dead;
CREATE INDEX a2_work_leased ON a2_work (lease_until) WHERE lease_until IS NOT NULL;

-- One cursor per session and fixed-lane consumer: it has processed its types through `position`,
-- and matching events exist through `target`.
CREATE TABLE a2_cursor (
    contract    text        NOT NULL,
    session_id  text        NOT NULL,
    consumer    text        NOT NULL,
    position    bigint      NOT NULL,
    target      bigint      NOT NULL,
    types       text[],
    attempt     integer     NOT NULL DEFAULT 0,
    failures    integer     NOT NULL DEFAULT 0,
    due_at      timestamptz,
    claim       uuid,
    lease_until timestamptz,
    failed_idx  bigint,
    dead        boolean     NOT NULL DEFAULT false,
    last_error  text,
    failed_at   timestamptz,
    PRIMARY KEY (contract, session_id, consumer)
);
CREATE INDEX a2_cursor_pending ON a2_cursor (due_at) WHERE NOT dead AND position < target;
CREATE INDEX a2_cursor_leased ON a2_cursor (lease_until) WHERE lease_until IS NOT NULL;

-- Timed appends and clears, delivered once by whichever instance's sweep takes them.
CREATE TABLE a2_schedule (
    contract      text        NOT NULL,
    session_id    text        NOT NULL,
    id            text        NOT NULL,
    due_at        timestamptz NOT NULL,
    clear_index   integer     NOT NULL,
    events        jsonb,
    if_last_index bigint,
    PRIMARY KEY (contract, session_id, id)
);
CREATE INDEX a2_schedule_due ON a2_schedule (due_at);
