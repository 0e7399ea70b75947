-- Agent runs: one row per run of a ticket's writer or implementer, with
-- what it handed back that the card, the grade page and the check run
-- show (never a test body). A round is one run of a role: the writer's
-- count the rejections it answers, the implementer's the grades of one
-- approved digest. Keep in step with migrations/postgres/0005_agent_runs.sql.
CREATE TABLE agent_runs (
    id             INTEGER PRIMARY KEY,
    ticket_id      BIGINT NOT NULL REFERENCES tickets (id),
    role           TEXT NOT NULL,
    harness        TEXT NOT NULL,
    model_api      TEXT NOT NULL DEFAULT '',
    round          INTEGER NOT NULL,
    digest         TEXT NOT NULL DEFAULT '',
    version_number INTEGER NOT NULL DEFAULT 0,
    state          TEXT NOT NULL,
    outcome        TEXT NOT NULL DEFAULT '',
    feedback       TEXT NOT NULL DEFAULT '',
    pr_number      INTEGER NOT NULL DEFAULT 0,
    head_sha       TEXT NOT NULL DEFAULT '',
    job_id         BIGINT NOT NULL DEFAULT 0,
    exit_code      INTEGER NOT NULL DEFAULT 0,
    duration_ms    BIGINT NOT NULL DEFAULT 0,
    summary        TEXT NOT NULL DEFAULT '',
    egress         TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(egress)),
    sightings      TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(sightings)),
    warnings       TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(warnings)),
    error          TEXT NOT NULL DEFAULT '',
    created_at     TEXT NOT NULL,
    started_at     TEXT,
    finished_at    TEXT,
    UNIQUE (ticket_id, role, digest, round)
);
CREATE INDEX agent_runs_head ON agent_runs (head_sha);
