-- Earlier attempts of a grade: a regrade of the same head and digest starts
-- the grade's row over, and what the finished attempt said is kept here
-- first, report included, as a CI system keeps every attempt of a job.
-- Keep in step with migrations/sqlite/0006_grade_attempts.sql.
CREATE TABLE grade_attempts (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    grade_id    BIGINT NOT NULL REFERENCES grades (id),
    attempt     INTEGER NOT NULL,
    state       TEXT NOT NULL,
    verdict     TEXT NOT NULL DEFAULT '',
    trust       TEXT NOT NULL DEFAULT '',
    passed      INTEGER NOT NULL DEFAULT 0,
    total       INTEGER NOT NULL DEFAULT 0,
    report      JSONB,
    started_at  TIMESTAMPTZ,
    finished_at TIMESTAMPTZ,
    UNIQUE (grade_id, attempt)
);
