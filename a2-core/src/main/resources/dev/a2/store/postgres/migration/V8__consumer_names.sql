-- The consumers an instance runs, by contract, recorded when its drainer starts. The dead letters'
-- filter reads them to tell a misspelt consumer from one that only another instance runs (done
-- units are deleted, so the work tables do not keep the names). A row stays after its consumer is
-- removed from the application, as its dead letters may. Not distributed on Citus: no row belongs
-- to a session, and only the coordinator reads it.
CREATE TABLE a2_consumer (
    contract text NOT NULL,
    name     text NOT NULL,
    PRIMARY KEY (contract, name)
);
