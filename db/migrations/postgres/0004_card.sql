-- The approval card. A version's approvals are signatures: one under
-- policy single, the requester's and a second approver's under policy
-- enforce. Each records how long its signer had the card (from the
-- version's ready_at) and whether that was under the repository's
-- fast-approval threshold. One signature per person and version. Keep in
-- step with migrations/sqlite/0004_card.sql.
ALTER TABLE approvals ADD COLUMN review_seconds BIGINT NOT NULL DEFAULT 0;
ALTER TABLE approvals ADD COLUMN fast BOOLEAN NOT NULL DEFAULT FALSE;
CREATE UNIQUE INDEX approvals_signer ON approvals (version_id, lower(approved_by));
