-- A snapshot's state is read back as it was written. jsonb orders an object's keys its own way
-- (shorter keys first), so a reducer's map kept in insertion order (an order's items, a poll's
-- options) came back from a snapshot in another order than a fold from the start gives, and two
-- instances answered one state in two orders. json keeps the text as written.
ALTER TABLE a2_state_snapshot ALTER COLUMN state TYPE json USING state::json;
