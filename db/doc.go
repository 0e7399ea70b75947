// Package db owns testfirst's persistence: the pipeline state (installations,
// repositories, tickets, versions, approvals, grades), webhook delivery
// records, the audit log, and the durable job queue (River) that shares the
// same database. Its rows carry the pipeline package's typed states.
//
// Two engines sit behind one API: SQLite (modernc.org/sqlite, pure Go, one
// writer connection in WAL mode) for a single machine, and PostgreSQL (pgx)
// at scale. Open picks the engine from the database URL, Migrate applies our
// embedded migrations and River's own, and Tx runs our writes and job inserts
// in one transaction so a job exists exactly when the state it acts on does.
package db
