-- Beyond one PostgreSQL: on a Citus coordinator, A2's tables are distributed by session_id, all
-- colocated with a2_session, so that every statement about one session runs on one shard.
--
-- a2_append is the append as a function: on Citus, the append's one statement (a chain of modifying
-- CTEs over unnest) would run step by step through the coordinator, while a call of this function
-- in auto-commit is delegated whole to the worker that holds the session's shard. On plain
-- PostgreSQL the store keeps that one statement (cheaper there); the function exists on both so that
-- the schema is the same everywhere. Its search path is the schema it was created in: a delegated
-- call runs on a worker, in a connection of Citus's own.
CREATE FUNCTION a2_append(p_contract text, p_session text, p_ids text[], p_types text[], p_payloads text[],
        p_created_at timestamptz, p_cause_consumers text[], p_cause_lanes text[], p_cause_indexes bigint[],
        p_cause_attempts integer[], p_work_ids text[], p_work_consumers text[], p_work_keys text[],
        p_cursor_ids text[], p_cursor_consumers text[], p_cursor_backfills boolean[], p_cursor_types text[])
    RETURNS TABLE (idx bigint, id text, created_at timestamptz, clear_index integer)
    LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
DECLARE
    v_count integer := cardinality(p_ids);
    v_base bigint;
    v_clear integer;
    v_at timestamptz := coalesce(p_created_at, now());
BEGIN
    INSERT INTO a2_session AS s (contract, session_id, last_index)
    VALUES (p_contract, p_session, v_count)
    ON CONFLICT (contract, session_id) DO UPDATE SET last_index = s.last_index + v_count
    RETURNING s.last_index - v_count, s.clear_index INTO v_base, v_clear;

    -- Under the session's row lock no other append of the session can add an id now. Checked here
    -- because a coordinator that runs this function inside a transaction copies the rows to the
    -- shard, and reports a unique violation there as an internal error.
    IF EXISTS (SELECT 1 FROM a2_event WHERE contract = p_contract AND session_id = p_session AND id = ANY(p_ids)) THEN
        RAISE EXCEPTION 'the session already has one of these event ids' USING ERRCODE = 'unique_violation';
    END IF;

    INSERT INTO a2_event (contract, session_id, idx, id, type, payload, created_at, clear_index,
                          cause_consumer, cause_lane, cause_index, cause_attempt)
    SELECT p_contract, p_session, v_base + e.ord, e.id, e.type, e.payload::jsonb, v_at, v_clear,
           e.cause_consumer, e.cause_lane, e.cause_index, e.cause_attempt
    FROM unnest(p_ids, p_types, p_payloads, p_cause_consumers, p_cause_lanes, p_cause_indexes, p_cause_attempts)
         WITH ORDINALITY AS e(id, type, payload, cause_consumer, cause_lane, cause_index, cause_attempt, ord);

    IF cardinality(p_work_ids) > 0 THEN
        INSERT INTO a2_work (contract, session_id, consumer, idx, lane_key)
        SELECT p_contract, p_session, w.consumer, v_base + e.ord, w.lane_key
        FROM unnest(p_ids) WITH ORDINALITY AS e(id, ord)
        JOIN unnest(p_work_ids, p_work_consumers, p_work_keys) AS w(id, consumer, lane_key) ON w.id = e.id;
    END IF;
    IF cardinality(p_cursor_ids) > 0 THEN
        INSERT INTO a2_cursor AS c (contract, session_id, consumer, position, target, types)
        SELECT p_contract, p_session, k.consumer, CASE WHEN k.backfill THEN 0 ELSE v_base END, v_base + max(e.ord),
               k.types::text[]
        FROM unnest(p_ids) WITH ORDINALITY AS e(id, ord)
        JOIN unnest(p_cursor_ids, p_cursor_consumers, p_cursor_backfills, p_cursor_types) AS k(id, consumer, backfill, types)
          ON k.id = e.id
        GROUP BY k.consumer, k.backfill, k.types
        ORDER BY k.consumer
        ON CONFLICT (contract, session_id, consumer) DO UPDATE
            SET target = greatest(c.target, excluded.target), types = excluded.types;
    END IF;
    RETURN QUERY SELECT v_base + e.ord, e.id, v_at, v_clear FROM unnest(p_ids) WITH ORDINALITY AS e(id, ord);
END
$fn$;

DO $distribute$
BEGIN
    EXECUTE format('ALTER FUNCTION %s SET search_path = %I', 'a2_append(text, text, text[], text[], text[], timestamptz, text[], text[], bigint[], integer[], text[], text[], text[], text[], text[], boolean[], text[])', current_schema());
    -- a2.store.distribute=false (set by the migrator for this transaction) leaves the tables local
    IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')
            AND coalesce(nullif(current_setting('a2.distribute', true), ''), 'true') <> 'false' THEN
        PERFORM create_distributed_table('a2_session', 'session_id');
        PERFORM create_distributed_table('a2_event', 'session_id', colocate_with => 'a2_session');
        PERFORM create_distributed_table('a2_state_snapshot', 'session_id', colocate_with => 'a2_session');
        PERFORM create_distributed_table('a2_work', 'session_id', colocate_with => 'a2_session');
        PERFORM create_distributed_table('a2_cursor', 'session_id', colocate_with => 'a2_session');
        PERFORM create_distributed_table('a2_schedule', 'session_id', colocate_with => 'a2_session');
        PERFORM create_distributed_table('a2_presence', 'session_id', colocate_with => 'a2_session');
        PERFORM create_distributed_function('a2_append(text, text, text[], text[], text[], timestamptz, text[], text[], bigint[], integer[], text[], text[], text[], text[], text[], boolean[], text[])', '$2', colocate_with => 'a2_session');
    END IF;
END
$distribute$;
