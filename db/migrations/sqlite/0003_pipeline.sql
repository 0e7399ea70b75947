-- The pipeline beyond labelling: what the service mirrors from the store,
-- what it announced, which pull requests close which tickets, and the full
-- grade report kept for the requester. Keep in step with
-- migrations/postgres/0003_pipeline.sql.

-- The issue as it was last seen: the card parses acceptance criteria from
-- the body. closed_at is set while the issue is closed; withdrawn_at while
-- the label is off.
ALTER TABLE tickets ADD COLUMN title TEXT NOT NULL DEFAULT '';
ALTER TABLE tickets ADD COLUMN body TEXT NOT NULL DEFAULT '';
ALTER TABLE tickets ADD COLUMN closed_at TEXT;
ALTER TABLE tickets ADD COLUMN withdrawn_at TEXT;

-- check_result is the base check's JSON (grader.BaseCheck, ReferenceCheck
-- and the test ids), null until it ran. announced is the version state last
-- told on the issue, so a comment is posted once per transition.
ALTER TABLE versions ADD COLUMN check_result TEXT CHECK (check_result IS NULL OR json_valid(check_result));
ALTER TABLE versions ADD COLUMN checked_at TEXT;
ALTER TABLE versions ADD COLUMN ready_at TEXT;
ALTER TABLE versions ADD COLUMN announced TEXT NOT NULL DEFAULT '';
ALTER TABLE versions ADD COLUMN rejection_reason TEXT NOT NULL DEFAULT '';

-- The grade job, the version graded, and the full report (runner output
-- included) for the requester's grade page; never shown on GitHub.
ALTER TABLE grades ADD COLUMN job_id BIGINT NOT NULL DEFAULT 0;
ALTER TABLE grades ADD COLUMN version_number INTEGER NOT NULL DEFAULT 0;
ALTER TABLE grades ADD COLUMN installation_id BIGINT NOT NULL DEFAULT 0;
ALTER TABLE grades ADD COLUMN report TEXT CHECK (report IS NULL OR json_valid(report));

-- Pull requests seen, and the tickets their bodies close.
CREATE TABLE pull_requests (
    repository_id BIGINT NOT NULL,
    number        INTEGER NOT NULL,
    head_sha      TEXT NOT NULL,
    author        TEXT NOT NULL DEFAULT '',
    open          BOOLEAN NOT NULL,
    updated_at    TEXT NOT NULL,
    PRIMARY KEY (repository_id, number)
);

CREATE TABLE pull_links (
    repository_id BIGINT NOT NULL,
    pr_number     INTEGER NOT NULL,
    issue_number  INTEGER NOT NULL,
    PRIMARY KEY (repository_id, pr_number, issue_number)
);
CREATE INDEX pull_links_issue ON pull_links (repository_id, issue_number);
