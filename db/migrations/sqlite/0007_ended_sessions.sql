-- Sign-ins that ended before their cookie expired (signed out), kept until
-- the cookie would have expired: every replica refuses a copy of a
-- signed-out session's cookie. Keep in step with
-- migrations/postgres/0007_ended_sessions.sql.
CREATE TABLE ended_sessions (
    id         TEXT PRIMARY KEY,
    expires_at TEXT NOT NULL
);
