-- Earlier attempts of a grade: a regrade of the same head and digest starts
-- the grade's row over, and what the finished attempt said is kept here
-- first, report included, as a CI system keeps every attempt of a job.
-- Keep in step with migrations/postgres/0006_grade_attempts.sql.
CREATE TABLE grade_attempts (
    id          INTEGER PRIMARY KEY,
    grade_id    BIGINT NOT NULL REFERENCES grades (id),
    attempt     INTEGER NOT NULL,
    state       TEXT NOT NULL,
    verdict     TEXT NOT NULL DEFAULT '',
    trust       TEXT NOT NULL DEFAULT '',
    passed      INTEGER NOT NULL DEFAULT 0,
    total       INTEGER NOT NULL DEFAULT 0,
    report      TEXT CHECK (report IS NULL OR json_valid(report)),
    started_at  TEXT,
    finished_at TEXT,
    UNIQUE (grade_id, attempt)
);
