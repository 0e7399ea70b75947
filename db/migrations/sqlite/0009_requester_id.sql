-- The requester's numeric GitHub user id, from the delivery that opened
-- the ticket: a login can be renamed away and taken by someone else, an
-- id cannot. 0 for tickets opened before, which are matched by login as
-- they were. Keep in step with migrations/postgres/0009_requester_id.sql.
ALTER TABLE tickets ADD COLUMN requester_id BIGINT NOT NULL DEFAULT 0;
