-- Hidden tests kept as regression tests after a pass (keep_tests): one
-- row per ticket at most, so a ticket's tests are kept once whatever
-- retries, redeliveries and later passes there are. state is
-- waiting_merge (a follow-up, or a fork's pull request, waits for its
-- merge) or kept; commit_sha is the commit that added them, parent_sha the
-- head that passed (a commit onto a pull request), follow_up_pr the
-- follow-up pull request. From kept_at on every later grade of the
-- ticket says the tests are public. Keep in step with
-- migrations/sqlite/0013_kept_tests.sql.
CREATE TABLE kept_tests (
    ticket_id    BIGINT PRIMARY KEY REFERENCES tickets (id),
    pr_number    INTEGER NOT NULL,
    mode         TEXT NOT NULL,
    state        TEXT NOT NULL,
    version      INTEGER NOT NULL,
    digest       TEXT NOT NULL,
    approved_by  TEXT NOT NULL DEFAULT '',
    note         TEXT NOT NULL DEFAULT '',
    branch       TEXT NOT NULL DEFAULT '',
    parent_sha   TEXT NOT NULL DEFAULT '',
    commit_sha   TEXT NOT NULL DEFAULT '',
    follow_up_pr INTEGER NOT NULL DEFAULT 0,
    created_at   TIMESTAMPTZ NOT NULL,
    kept_at      TIMESTAMPTZ
);
