-- A redrive gives a unit (or a cursor's head) a fresh count of failures and takeovers, but not a
-- fresh attempt number: context.attempt() and the attempt events carry name one try of the run, and
-- a redriven run told it is attempt 1 again wrote under the ids of the first (an assistant's reply
-- spliced from two attempts). The attempts before the last redrive are kept here, and the limit of
-- takeovers counts only those after it.
ALTER TABLE a2_work ADD COLUMN attempts_before integer NOT NULL DEFAULT 0;
ALTER TABLE a2_cursor ADD COLUMN attempts_before integer NOT NULL DEFAULT 0;
