package db

import (
	"container/list"
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"reflect"
	"sync"
)

// sqliteStmtCacheSize bounds the prepared statements one SQLite connection
// keeps. River's queries and ours are a few hundred texts at most; those
// built per batch size (IN lists, multi-row inserts) come and go.
const sqliteStmtCacheSize = 256

// stmtCachingConnector opens SQLite connections that keep their prepared
// statements. modernc.org/sqlite prepares every statement run through
// ExecContext or QueryContext anew and finalizes it after one use, and
// River's statements are long: parsing them was about half the CPU of
// working off a queue with one worker and a sixth of the intake's. A
// statement is kept per connection and per query text, reset between runs
// (modernc's own prepared statements support that), and finalized when it
// falls out of the cache or the connection closes.
type stmtCachingConnector struct {
	driver.Connector
}

// Connect implements driver.Connector.
func (c stmtCachingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return newStmtCachingConn(conn)
}

// fullConn is every interface modernc's connections implement and the
// statement cache forwards.
type fullConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

// stmtCachingConn is one connection with its statement cache. It forwards
// every optional interface modernc's connections implement, as modernc's
// NewConnector documentation asks of a wrapper.
type stmtCachingConn struct {
	conn fullConn

	mu    sync.Mutex
	stmts map[string]*list.Element // of *cachedStmt
	lru   list.List                // most recently used first
}

var (
	_ driver.Connector          = stmtCachingConnector{}
	_ driver.ConnBeginTx        = (*stmtCachingConn)(nil)
	_ driver.ConnPrepareContext = (*stmtCachingConn)(nil)
	_ driver.ExecerContext      = (*stmtCachingConn)(nil)
	_ driver.QueryerContext     = (*stmtCachingConn)(nil)
	_ driver.Pinger             = (*stmtCachingConn)(nil)
	_ driver.SessionResetter    = (*stmtCachingConn)(nil)
	_ driver.Validator          = (*stmtCachingConn)(nil)
)

// cachedStmt is a prepared statement and whether rows of it are open.
type cachedStmt struct {
	query string
	stmt  interface {
		driver.Stmt
		driver.StmtExecContext
		driver.StmtQueryContext
	}
	busy    bool // rows of it are open: another run must not reset it
	evicted bool // out of the cache: finalize when its rows close
}

func newStmtCachingConn(conn driver.Conn) (*stmtCachingConn, error) {
	c, ok := conn.(fullConn)
	if !ok {
		_ = conn.Close()
		return nil, fmt.Errorf("open SQLite: connection %T lacks an interface the statement cache forwards", conn)
	}
	return &stmtCachingConn{conn: c, stmts: make(map[string]*list.Element)}, nil
}

// Unwrap returns modernc's connection, for modernc's helpers that need it.
func (c *stmtCachingConn) Unwrap() driver.Conn { return c.conn }

// acquire returns the cached statement for query, preparing and caching it
// first if need be, marked busy when forRows. It returns nil when the
// cached one is busy (its rows are open: the caller runs query uncached).
func (c *stmtCachingConn) acquire(ctx context.Context, query string, forRows bool) (*cachedStmt, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.stmts[query]; ok {
		s := e.Value.(*cachedStmt)
		if s.busy {
			return nil, nil
		}
		c.lru.MoveToFront(e)
		s.busy = forRows
		return s, nil
	}
	ds, err := c.conn.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	st, ok := ds.(interface {
		driver.Stmt
		driver.StmtExecContext
		driver.StmtQueryContext
	})
	if !ok {
		return nil, ds.Close()
	}
	s := &cachedStmt{query: query, stmt: st, busy: forRows}
	c.stmts[query] = c.lru.PushFront(s)
	var errs []error
	for c.lru.Len() > sqliteStmtCacheSize {
		errs = append(errs, c.evict(c.lru.Back()))
	}
	return s, errors.Join(errs...)
}

// evict drops e from the cache and finalizes its statement, or leaves that
// to the close of its open rows. Call it with c.mu held.
func (c *stmtCachingConn) evict(e *list.Element) error {
	s := c.lru.Remove(e).(*cachedStmt)
	delete(c.stmts, s.query)
	s.evicted = true
	if s.busy {
		return nil
	}
	return s.stmt.Close()
}

// release marks s free again once its rows are closed.
func (c *stmtCachingConn) release(s *cachedStmt) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	s.busy = false
	if s.evicted {
		return s.stmt.Close()
	}
	return nil
}

// ExecContext implements driver.ExecerContext with a cached statement.
func (c *stmtCachingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	s, err := c.acquire(ctx, query, false)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return c.conn.ExecContext(ctx, query, args)
	}
	return s.stmt.ExecContext(ctx, args)
}

// QueryContext implements driver.QueryerContext with a cached statement,
// busy until the rows are closed.
func (c *stmtCachingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	s, err := c.acquire(ctx, query, true)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return c.conn.QueryContext(ctx, query, args)
	}
	rows, err := s.stmt.QueryContext(ctx, args)
	if err != nil {
		return nil, errors.Join(err, c.release(s))
	}
	sr, ok := rows.(sqliteRows)
	if !ok {
		return nil, errors.Join(fmt.Errorf("query SQLite: rows %T lack column type methods", rows), rows.Close(), c.release(s))
	}
	return &cachedRows{rows: sr, release: func() error { return c.release(s) }}, nil
}

// PrepareContext implements driver.ConnPrepareContext. Statements prepared
// explicitly belong to database/sql, which closes them: they bypass the
// cache.
func (c *stmtCachingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.conn.PrepareContext(ctx, query)
}

// Prepare implements driver.Conn.
func (c *stmtCachingConn) Prepare(query string) (driver.Stmt, error) { return c.conn.Prepare(query) }

// Begin implements driver.Conn.
//
// Deprecated: database/sql calls BeginTx.
func (c *stmtCachingConn) Begin() (driver.Tx, error) { return c.conn.Begin() } //nolint:staticcheck // forwarded as is

// BeginTx implements driver.ConnBeginTx.
func (c *stmtCachingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.conn.BeginTx(ctx, opts)
}

// Ping implements driver.Pinger.
func (c *stmtCachingConn) Ping(ctx context.Context) error { return c.conn.Ping(ctx) }

// ResetSession implements driver.SessionResetter.
func (c *stmtCachingConn) ResetSession(ctx context.Context) error { return c.conn.ResetSession(ctx) }

// IsValid implements driver.Validator.
func (c *stmtCachingConn) IsValid() bool { return c.conn.IsValid() }

// Close finalizes the cached statements and closes the connection.
func (c *stmtCachingConn) Close() error {
	c.mu.Lock()
	var errs []error
	for c.lru.Len() > 0 {
		errs = append(errs, c.evict(c.lru.Front()))
	}
	c.mu.Unlock()
	return errors.Join(append(errs, c.conn.Close())...)
}

// sqliteRows is what modernc's rows implement.
type sqliteRows interface {
	driver.Rows
	driver.RowsColumnTypeDatabaseTypeName
	driver.RowsColumnTypeLength
	driver.RowsColumnTypeNullable
	driver.RowsColumnTypePrecisionScale
	driver.RowsColumnTypeScanType
}

// cachedRows are the rows of a cached statement; closing them frees it.
type cachedRows struct {
	rows    sqliteRows
	release func() error
	closed  bool
}

var _ sqliteRows = (*cachedRows)(nil)

func (r *cachedRows) Columns() []string              { return r.rows.Columns() }
func (r *cachedRows) Next(dest []driver.Value) error { return r.rows.Next(dest) }

// Close closes the rows, which resets the statement, and frees it.
func (r *cachedRows) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	return errors.Join(r.rows.Close(), r.release())
}

func (r *cachedRows) ColumnTypeDatabaseTypeName(i int) string {
	return r.rows.ColumnTypeDatabaseTypeName(i)
}

func (r *cachedRows) ColumnTypeLength(i int) (int64, bool) { return r.rows.ColumnTypeLength(i) }

func (r *cachedRows) ColumnTypeNullable(i int) (bool, bool) { return r.rows.ColumnTypeNullable(i) }

func (r *cachedRows) ColumnTypePrecisionScale(i int) (int64, int64, bool) {
	return r.rows.ColumnTypePrecisionScale(i)
}

func (r *cachedRows) ColumnTypeScanType(i int) reflect.Type { return r.rows.ColumnTypeScanType(i) }
