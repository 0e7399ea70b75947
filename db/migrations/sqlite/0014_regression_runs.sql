-- The regression run of a pull request's grade: the base's own test suite
-- run on the base and on the pull request's code, posted as a check run of
-- its own ("testfirst / regressions"). One row per grade. state is queued,
-- running or completed; verdict pass, fail or error once completed;
-- report is its public part (counts and ids), output the pull request's
-- run's output, for the requester only. check_run_id is the check run,
-- 0 before it is made. Keep in step with
-- migrations/postgres/0014_regression_runs.sql.
CREATE TABLE regression_runs (
    grade_id     BIGINT PRIMARY KEY REFERENCES grades (id),
    ticket_id    BIGINT NOT NULL REFERENCES tickets (id),
    head_sha     TEXT NOT NULL,
    state        TEXT NOT NULL,
    verdict      TEXT NOT NULL DEFAULT '',
    report       TEXT,
    output       TEXT NOT NULL DEFAULT '',
    check_run_id BIGINT NOT NULL DEFAULT 0,
    created_at   TEXT NOT NULL,
    finished_at  TEXT
);
