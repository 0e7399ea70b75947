package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// querier is the little of database/sql and pgx our queries need, so one
// query text serves both engines. Placeholders are $1, $2, … in both.
type querier interface {
	exec(ctx context.Context, query string, args ...any) (rowsAffected int64, err error)
	queryRow(ctx context.Context, query string, args ...any) row
	query(ctx context.Context, query string, args ...any) (rows, error)
}

// row is one result row; Scan returns ErrNotFound when there is none.
type row interface{ Scan(dest ...any) error }

// rows is a result set.
type rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// sqlQuerier runs on a *sql.DB or *sql.Tx.
type sqlQuerier struct {
	db interface {
		ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
		QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
		QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	}
}

func (q sqlQuerier) exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := q.db.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (q sqlQuerier) queryRow(ctx context.Context, query string, args ...any) row {
	return notFoundRow{q.db.QueryRowContext(ctx, query, args...)}
}

func (q sqlQuerier) query(ctx context.Context, query string, args ...any) (rows, error) {
	r, err := q.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return sqlRows{r}, nil
}

type sqlRows struct{ *sql.Rows }

func (r sqlRows) Close() { _ = r.Rows.Close() }

// pgxQuerier runs on a *pgxpool.Pool or pgx.Tx.
type pgxQuerier struct {
	db interface {
		Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
		QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
		Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	}
}

func (q pgxQuerier) exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := q.db.Exec(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

func (q pgxQuerier) queryRow(ctx context.Context, query string, args ...any) row {
	return notFoundRow{q.db.QueryRow(ctx, query, args...)}
}

func (q pgxQuerier) query(ctx context.Context, query string, args ...any) (rows, error) {
	return q.db.Query(ctx, query, args...)
}

// notFoundRow maps both drivers' "no rows" to ErrNotFound.
type notFoundRow struct{ row }

func (r notFoundRow) Scan(dest ...any) error {
	err := r.row.Scan(dest...)
	if errors.Is(err, sql.ErrNoRows) || errors.Is(err, pgx.ErrNoRows) {
		return ErrNotFound
	}
	return err
}

// dialect holds what differs between the engines in query arguments.
type dialect interface {
	// time encodes a timestamp argument.
	time(t time.Time) any
}

// sqliteTimeLayout is how SQLite columns hold timestamps: UTC text of fixed
// width, so comparing the text compares the instants.
const sqliteTimeLayout = "2006-01-02T15:04:05.000000Z"

type sqliteDialect struct{}

func (sqliteDialect) time(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(sqliteTimeLayout)
}

type postgresDialect struct{}

func (postgresDialect) time(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC()
}

// timeCol scans a timestamp column of either engine; NULL gives the zero time.
type timeCol struct{ t *time.Time }

var _ sql.Scanner = timeCol{}

func (c timeCol) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*c.t = time.Time{}
	case time.Time:
		*c.t = v.UTC()
	case string:
		return c.parse(v)
	case []byte:
		return c.parse(string(v))
	default:
		return fmt.Errorf("scan timestamp: unsupported type %T", src)
	}
	return nil
}

func (c timeCol) parse(s string) error {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return fmt.Errorf("scan timestamp %q: %w", s, err)
	}
	*c.t = t.UTC()
	return nil
}

// jsonCol scans a nullable JSON column (TEXT on SQLite, JSONB on
// PostgreSQL) into a json.RawMessage; NULL scans as nil.
type jsonCol struct{ m *json.RawMessage }

var _ sql.Scanner = jsonCol{}

func (c jsonCol) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*c.m = nil
	case string:
		*c.m = json.RawMessage(v)
	case []byte:
		*c.m = slices.Clone(json.RawMessage(v))
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("scan JSON column: %w", err)
		}
		*c.m = b
	}
	return nil
}

// jsonArg encodes raw JSON as a column argument: NULL when empty.
func jsonArg(m json.RawMessage) any {
	if len(m) == 0 {
		return nil
	}
	return string(m)
}
