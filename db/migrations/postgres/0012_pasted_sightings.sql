-- Hidden tests seen pasted, without their canary, into an issue, a
-- comment, a pull request's description or review, or an implementer's
-- task: where (a description anyone who reads the repository can follow)
-- and what matched (the version, hidden file and test, and how many of
-- its new shingles; never test text). Every grade of the ticket from then
-- on is contaminated. One row per place and hidden test, so a retried or
-- redelivered event adds none. Keep in step with
-- migrations/sqlite/0012_pasted_sightings.sql.
CREATE TABLE pasted_sightings (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    ticket_id   BIGINT NOT NULL REFERENCES tickets (id),
    seen_in     TEXT NOT NULL,
    url         TEXT NOT NULL DEFAULT '',
    author      TEXT NOT NULL DEFAULT '',
    version     INTEGER NOT NULL,
    hidden_file TEXT NOT NULL,
    test        TEXT NOT NULL DEFAULT '',
    matched     INTEGER NOT NULL,
    of_total    INTEGER NOT NULL,
    first_line  INTEGER NOT NULL,
    last_line   INTEGER NOT NULL,
    seen_at     TIMESTAMPTZ NOT NULL,
    UNIQUE (ticket_id, seen_in, version, hidden_file, test)
);
