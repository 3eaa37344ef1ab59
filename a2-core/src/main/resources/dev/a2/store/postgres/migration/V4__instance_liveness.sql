-- Instance liveness. A draining instance holds a session-level advisory lock, keyed by an id from
-- this sequence, on a connection of its own for as long as it lives; PostgreSQL releases the lock
-- when that connection's backend ends (the process died, the connection dropped). A claim records
-- the id of the instance that made it (`owner`), and the sweep makes the claims of an owner whose
-- lock is gone claimable at once, instead of after their lease.
CREATE SEQUENCE a2_instance AS integer MINVALUE 1 CYCLE;

ALTER TABLE a2_work ADD COLUMN owner integer;
ALTER TABLE a2_cursor ADD COLUMN owner integer;
