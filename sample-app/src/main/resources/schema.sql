-- the word-count projection's table (A2's own tables are migrated by A2)
CREATE TABLE IF NOT EXISTS sample_room_words (
    room    text PRIMARY KEY,
    words   bigint NOT NULL,
    through bigint NOT NULL,
    cleared integer NOT NULL DEFAULT 0
);
-- the clear index of the messages counted (a table of an earlier sample lacks it)
ALTER TABLE sample_room_words ADD COLUMN IF NOT EXISTS cleared integer NOT NULL DEFAULT 0;
