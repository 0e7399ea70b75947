-- The numeric GitHub user id of a signature's account: a login can be
-- renamed and taken by someone else, an id cannot. Under enforce the
-- requester's signature is the requester account's, and one account signs
-- a version once whatever logins it signed under. 0 for signatures made
-- before, which are matched by login as they were. Keep in step with
-- migrations/sqlite/0011_approver_id.sql.
ALTER TABLE approvals ADD COLUMN approver_id BIGINT NOT NULL DEFAULT 0;
CREATE UNIQUE INDEX approvals_approver ON approvals (version_id, approver_id) WHERE approver_id <> 0;
