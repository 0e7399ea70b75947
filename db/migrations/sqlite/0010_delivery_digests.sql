-- The SHA-256 of a delivery's body as signed. Only the body is signed, not
-- X-GitHub-Delivery: the same body sent again under a new delivery id is a
-- duplicate too, known by this column's unique index (RecordDeliveries).
-- NULL for deliveries recorded before it, which NULLs never collide with.
-- Pruned with the delivery. Keep in step with
-- migrations/postgres/0010_delivery_digests.sql.
ALTER TABLE deliveries ADD COLUMN payload_sha256 BLOB;
CREATE UNIQUE INDEX deliveries_payload_sha256 ON deliveries (payload_sha256);
