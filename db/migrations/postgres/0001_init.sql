-- testfirst's pipeline state on PostgreSQL. Keep in step with
-- migrations/sqlite/0001_init.sql: same tables, columns and constraints.

-- GitHub App installations, keyed by GitHub's installation id.
CREATE TABLE installations (
    id            BIGINT PRIMARY KEY,
    account_login TEXT NOT NULL,
    account_type  TEXT NOT NULL DEFAULT '',
    suspended_at  TIMESTAMPTZ,
    deleted_at    TIMESTAMPTZ,
    created_at    TIMESTAMPTZ NOT NULL,
    updated_at    TIMESTAMPTZ NOT NULL
);

-- Repositories the app can see, keyed by GitHub's repository id. The
-- installation may be unknown when events arrive out of order: no foreign key.
CREATE TABLE repositories (
    id              BIGINT PRIMARY KEY,
    installation_id BIGINT NOT NULL,
    owner           TEXT NOT NULL,
    name            TEXT NOT NULL,
    default_branch  TEXT NOT NULL DEFAULT '',
    removed_at      TIMESTAMPTZ,
    created_at      TIMESTAMPTZ NOT NULL,
    updated_at      TIMESTAMPTZ NOT NULL
);
CREATE INDEX repositories_installation ON repositories (installation_id);
CREATE INDEX repositories_full_name ON repositories (owner, name);

-- One ticket per labelled issue.
CREATE TABLE tickets (
    id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    repository_id BIGINT NOT NULL REFERENCES repositories (id),
    issue_number  INTEGER NOT NULL,
    requester     TEXT NOT NULL,
    base_sha      TEXT NOT NULL,
    state         TEXT NOT NULL,
    label         TEXT NOT NULL,
    created_at    TIMESTAMPTZ NOT NULL,
    updated_at    TIMESTAMPTZ NOT NULL,
    UNIQUE (repository_id, issue_number)
);
CREATE INDEX tickets_state ON tickets (state);

-- Hidden-test versions: metadata only, the bodies live in the store.
CREATE TABLE versions (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    ticket_id  BIGINT NOT NULL REFERENCES tickets (id),
    number     INTEGER NOT NULL,
    digest     TEXT NOT NULL,
    state      TEXT NOT NULL,
    author     TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    UNIQUE (ticket_id, number)
);

-- An approval binds one version's exact digest.
CREATE TABLE approvals (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    version_id  BIGINT NOT NULL REFERENCES versions (id),
    approved_by TEXT NOT NULL,
    approved_at TIMESTAMPTZ NOT NULL,
    digest      TEXT NOT NULL
);
CREATE INDEX approvals_version ON approvals (version_id);

-- One grade per (head SHA, approved digest).
CREATE TABLE grades (
    id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    ticket_id    BIGINT NOT NULL REFERENCES tickets (id),
    pr_number    INTEGER NOT NULL,
    head_sha     TEXT NOT NULL,
    digest       TEXT NOT NULL,
    check_run_id BIGINT NOT NULL DEFAULT 0,
    state        TEXT NOT NULL,
    verdict      TEXT NOT NULL DEFAULT '',
    trust        TEXT NOT NULL DEFAULT '',
    total        INTEGER NOT NULL DEFAULT 0,
    passed       INTEGER NOT NULL DEFAULT 0,
    failed       INTEGER NOT NULL DEFAULT 0,
    errored      INTEGER NOT NULL DEFAULT 0,
    skipped      INTEGER NOT NULL DEFAULT 0,
    started_at   TIMESTAMPTZ,
    finished_at  TIMESTAMPTZ,
    created_at   TIMESTAMPTZ NOT NULL,
    UNIQUE (head_sha, digest)
);
CREATE INDEX grades_ticket ON grades (ticket_id, pr_number);
CREATE INDEX grades_state ON grades (state);

-- Webhook deliveries seen, for dedupe by X-GitHub-Delivery.
CREATE TABLE deliveries (
    id              TEXT PRIMARY KEY,
    event           TEXT NOT NULL,
    action          TEXT NOT NULL DEFAULT '',
    installation_id BIGINT NOT NULL DEFAULT 0,
    received_at     TIMESTAMPTZ NOT NULL
);
CREATE INDEX deliveries_received_at ON deliveries (received_at);

-- Every pipeline transition.
CREATE TABLE audit_events (
    id        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at        TIMESTAMPTZ NOT NULL,
    actor     TEXT NOT NULL,
    ticket_id BIGINT,
    kind      TEXT NOT NULL,
    detail    JSONB NOT NULL DEFAULT '{}'
);
CREATE INDEX audit_events_ticket ON audit_events (ticket_id, id);
