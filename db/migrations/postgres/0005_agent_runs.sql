-- Agent runs: one row per run of a ticket's writer or implementer, with
-- what it handed back that the card, the grade page and the check run
-- show (never a test body). A round is one run of a role: the writer's
-- count the rejections it answers, the implementer's the grades of one
-- approved digest. Keep in step with migrations/sqlite/0005_agent_runs.sql.
CREATE TABLE agent_runs (
    id             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
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
    egress         JSONB NOT NULL DEFAULT '[]',
    sightings      JSONB NOT NULL DEFAULT '[]',
    warnings       JSONB NOT NULL DEFAULT '[]',
    error          TEXT NOT NULL DEFAULT '',
    created_at     TIMESTAMPTZ NOT NULL,
    started_at     TIMESTAMPTZ,
    finished_at    TIMESTAMPTZ,
    UNIQUE (ticket_id, role, digest, round)
);
CREATE INDEX agent_runs_head ON agent_runs (head_sha);
