package db

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"
)

// postgresConnectTimeout bounds how long Open waits for the server.
const postgresConnectTimeout = 10 * time.Second

// migrationLockID is the PostgreSQL advisory lock that serialises Migrate
// across processes ("testfirst" in ASCII, truncated to 63 bits).
const migrationLockID int64 = 0x7465737466697273

// postgresEngine is PostgreSQL through a pgx pool.
type postgresEngine struct {
	pool  *pgxpool.Pool
	river *river.Client[pgx.Tx]
}

var _ engine = (*postgresEngine)(nil)

func openPostgres(ctx context.Context, databaseURL string) (*postgresEngine, error) {
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		// pgx's message may quote the URL, password included.
		return nil, fmt.Errorf("open PostgreSQL: TESTFIRST_DATABASE_URL is not a valid postgres:// URL: use postgres://user:password@host:5432/dbname?sslmode=disable")
	}
	where := net.JoinHostPort(cfg.ConnConfig.Host, fmt.Sprint(cfg.ConnConfig.Port))
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open PostgreSQL at %s: %w", where, err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, postgresConnectTimeout)
	defer cancel()
	if err := pool.Ping(pingCtx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to PostgreSQL at %s (database %q, user %q): %w: %s",
			where, cfg.ConnConfig.Database, cfg.ConnConfig.User, err, postgresHint(err))
	}
	rc, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("open PostgreSQL at %s: create River client: %w", where, err)
	}
	return &postgresEngine{pool: pool, river: rc}, nil
}

// postgresHint says how to fix a failed connection.
func postgresHint(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "28P01", "28000":
			return "check the user and password in TESTFIRST_DATABASE_URL"
		case "3D000":
			return "create the database (createdb) or fix the name in TESTFIRST_DATABASE_URL"
		}
		return "fix TESTFIRST_DATABASE_URL or the server's configuration"
	}
	return "start PostgreSQL on that host, or fix the host and port in TESTFIRST_DATABASE_URL"
}

func (e *postgresEngine) kind() Engine                   { return Postgres }
func (e *postgresEngine) dialect() dialect               { return postgresDialect{} }
func (e *postgresEngine) querier() querier               { return pgxQuerier{e.pool} }
func (e *postgresEngine) ping(ctx context.Context) error { return e.pool.Ping(ctx) }
func (e *postgresEngine) close() error                   { e.pool.Close(); return nil }

// txAttempts bounds how often withTx runs a transaction the server aborted
// for a deadlock or a serialization failure.
const txAttempts = 4

// withTx runs fn in a transaction. When PostgreSQL aborts it to break a
// deadlock (two replicas writing the same rows in different orders) or for
// a serialization failure, nothing of it was kept, and fn runs again in a
// new transaction, up to txAttempts times: the writes are retried, not
// failed. fn must therefore do nothing outside the transaction that cannot
// be done twice.
func (e *postgresEngine) withTx(ctx context.Context, fn func(querier, jobInserter) error) error {
	var err error
	for attempt := 1; ; attempt++ {
		err = e.tryTx(ctx, fn)
		if attempt == txAttempts || !retryable(err) || ctx.Err() != nil {
			return err
		}
		// A short pause, longer each time, so the two do not meet again.
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(attempt*attempt) * 10 * time.Millisecond):
		}
	}
}

// retryable reports whether err is PostgreSQL aborting a transaction that
// can simply run again: deadlock_detected or serialization_failure.
func retryable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40P01" || pgErr.Code == "40001")
}

func (e *postgresEngine) tryTx(ctx context.Context, fn func(querier, jobInserter) error) error {
	tx, err := e.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	committed := false
	defer func() {
		if !committed {
			// A fresh context: rollback must happen even when ctx ended.
			_ = tx.Rollback(context.WithoutCancel(ctx))
		}
	}()
	if err := fn(pgxQuerier{tx}, postgresJobs{e.river, tx}); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	committed = true
	return nil
}

type postgresJobs struct {
	c  *river.Client[pgx.Tx]
	tx pgx.Tx
}

func (j postgresJobs) insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error) {
	return j.c.InsertTx(ctx, j.tx, args, opts)
}

func (j postgresJobs) insertMany(ctx context.Context, params []river.InsertManyParams) (int, error) {
	return j.c.InsertManyFastTx(ctx, j.tx, params)
}

func (e *postgresEngine) migrator() (*rivermigrate.Migrator[pgx.Tx], error) {
	return rivermigrate.New(riverpgxv5.New(e.pool), &rivermigrate.Config{Logger: quietLogger()})
}

func (e *postgresEngine) migrateRiver(ctx context.Context) error {
	m, err := e.migrator()
	if err != nil {
		return err
	}
	_, err = m.Migrate(ctx, rivermigrate.DirectionUp, nil)
	return err
}

func (e *postgresEngine) pendingRiver(ctx context.Context) ([]int, error) {
	m, err := e.migrator()
	if err != nil {
		return nil, err
	}
	return pendingRiver(ctx, m)
}

// lockMigrations takes a session advisory lock on a connection outside the
// pool, so two processes starting together migrate one after the other and
// a waiter never holds a pool connection the lock holder needs.
func (e *postgresEngine) lockMigrations(ctx context.Context) (func(), error) {
	conn, err := pgx.ConnectConfig(ctx, e.pool.Config().ConnConfig.Copy())
	if err != nil {
		return nil, fmt.Errorf("connect for migration lock: %w", err)
	}
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", migrationLockID); err != nil {
		_ = conn.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("take migration lock: %w", err)
	}
	return func() {
		// Closing the session releases the lock as well.
		_ = conn.Close(context.WithoutCancel(ctx))
	}, nil
}

// fetchPollInterval is River's default on PostgreSQL: inserts wake the job
// clients through LISTEN/NOTIFY, so polling is only the fallback.
func (e *postgresEngine) fetchPollInterval() time.Duration { return river.FetchPollIntervalDefault }

func (e *postgresEngine) newJobClient(cfg *river.Config) (*JobClient, error) {
	c, err := river.NewClient(riverpgxv5.New(e.pool), cfg)
	if err != nil {
		return nil, err
	}
	return &JobClient{riverClient: jobClient[pgx.Tx]{c}}, nil
}
