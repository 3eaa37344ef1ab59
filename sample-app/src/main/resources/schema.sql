-- the word-count projection's table (A2's own tables are migrated by A2)
CREATE TABLE IF NOT EXISTS sample_room_words (
    room    text PRIMARY KEY,
    words   bigint NOT NULL,
    through bigint NOT NULL
);
