package db

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// Engine names the database behind a DB.
type Engine string

// The engines Open knows.
const (
	SQLite   Engine = "sqlite"
	Postgres Engine = "postgres"
)

// ErrNotFound is returned by lookups that match no row.
var ErrNotFound = errors.New("not found")

// DB is an open testfirst database with its River job queue. It is safe for
// concurrent use. On SQLite every statement, River's included, goes through
// one connection: never call a DB method from inside a Tx callback, it would
// wait for the connection the transaction holds.
type DB struct {
	eng engine
	// migrating serialises Migrate within this process.
	migrating sync.Mutex
}

// engine is what each database adapter provides.
type engine interface {
	kind() Engine
	dialect() dialect
	ping(ctx context.Context) error
	// exec runs statements outside a transaction.
	querier() querier
	// withTx runs fn in one transaction with a job inserter bound to it.
	withTx(ctx context.Context, fn func(q querier, jobs jobInserter) error) error
	migrateRiver(ctx context.Context) error
	pendingRiver(ctx context.Context) ([]int, error)
	// lockMigrations serialises Migrate across processes; the returned
	// function releases the lock.
	lockMigrations(ctx context.Context) (func(), error)
	newJobClient(cfg *river.Config) (*JobClient, error)
	// fetchPollInterval is how often a job client looks for new jobs
	// when nothing tells it of them.
	fetchPollInterval() time.Duration
	close() error
}

// jobInserter inserts River jobs in the transaction it was made for.
type jobInserter interface {
	insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
	insertMany(ctx context.Context, params []river.InsertManyParams) (int, error)
}

// Open connects to the database named by databaseURL:
//
//	sqlite:///abs/path/testfirst.db
//	sqlite://./relative/path/testfirst.db
//	postgres://user:password@host:5432/dbname?sslmode=disable
//
// It proves the connection before returning. Open does not migrate: call
// Migrate (testfirst migrate, or at start-up) and Ready.
func Open(ctx context.Context, databaseURL string) (*DB, error) {
	scheme, rest, ok := strings.Cut(databaseURL, "://")
	if !ok {
		return nil, fmt.Errorf("open database: %q is not a URL: set TESTFIRST_DATABASE_URL to sqlite:///path/to/testfirst.db or postgres://user:password@host:5432/dbname", redact(databaseURL))
	}
	var (
		eng engine
		err error
	)
	switch strings.ToLower(scheme) {
	case "sqlite", "sqlite3":
		eng, err = openSQLite(ctx, rest)
	case "postgres", "postgresql":
		eng, err = openPostgres(ctx, databaseURL)
	default:
		return nil, fmt.Errorf("open database: unknown scheme %q: set TESTFIRST_DATABASE_URL to sqlite:///path/to/testfirst.db or postgres://user:password@host:5432/dbname", scheme)
	}
	if err != nil {
		return nil, err
	}
	return &DB{eng: eng}, nil
}

// redact hides everything after the scheme, which may hold a password.
func redact(s string) string {
	if len(s) > 12 {
		return s[:12] + "…"
	}
	return s
}

// Engine reports which database this is.
func (d *DB) Engine() Engine { return d.eng.kind() }

// Close releases the connections. Stop every JobClient first.
func (d *DB) Close() error { return d.eng.close() }

// Tx runs fn in one transaction: it commits when fn returns nil and rolls
// back when fn returns an error or panics. Jobs inserted through tx.InsertJob
// exist only if the transaction commits. fn must not use d itself, and must
// not keep tx after it returns. On PostgreSQL fn may run more than once: a
// transaction the server aborts for a deadlock or a serialization failure
// runs again (postgresEngine.withTx), so fn must set, not accumulate, what
// it hands out, and do nothing outside the transaction.
func (d *DB) Tx(ctx context.Context, fn func(tx *Tx) error) error {
	return d.eng.withTx(ctx, func(q querier, jobs jobInserter) error {
		return fn(&Tx{q: q, dia: d.eng.dialect(), jobs: jobs})
	})
}

// Tx is one open transaction: our queries and River job inserts, committed
// or rolled back together. Use it only inside the DB.Tx callback.
type Tx struct {
	q    querier
	dia  dialect
	jobs jobInserter
}

// InsertJob enqueues a River job in this transaction. The job becomes
// visible to workers when the transaction commits and vanishes if it rolls
// back. It fails when args are invalid (for example an unknown kind on a
// client that validates kinds) or the database fails.
func (t *Tx) InsertJob(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) error {
	if _, err := t.jobs.insert(ctx, args, opts); err != nil {
		return fmt.Errorf("insert job %s: %w", args.Kind(), err)
	}
	return nil
}

// InsertJobResult is InsertJob that also returns River's result, which tells
// whether a unique job was skipped as a duplicate.
func (t *Tx) InsertJobResult(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error) {
	res, err := t.jobs.insert(ctx, args, opts)
	if err != nil {
		return nil, fmt.Errorf("insert job %s: %w", args.Kind(), err)
	}
	return res, nil
}

// InsertJobs enqueues several River jobs in this transaction with River's
// fast batch insert (COPY on PostgreSQL, one statement on SQLite), which
// returns no rows: it does not handle unique jobs, and a unique conflict
// fails the whole insert. Insert unique jobs with InsertJob.
func (t *Tx) InsertJobs(ctx context.Context, params []river.InsertManyParams) error {
	if len(params) == 0 {
		return nil
	}
	if _, err := t.jobs.insertMany(ctx, params); err != nil {
		return fmt.Errorf("insert %d jobs: %w", len(params), err)
	}
	return nil
}

// now is the clock for rows that record when they were written.
var now = func() time.Time { return time.Now().UTC() }
