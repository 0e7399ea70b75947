-- The payload of a delivery that needs a job, written in the transaction
-- that records the delivery and enqueues the job; the job carries only the
-- delivery id and its worker reads the payload from here. NULL for
-- deliveries that need no job. Pruned with the delivery (PruneDeliveries).
-- Keep in step with migrations/postgres/0002_delivery_payloads.sql.
ALTER TABLE deliveries ADD COLUMN payload BLOB;
