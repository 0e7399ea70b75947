package db

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"modernc.org/sqlite"
)

// openCachingSQLite opens a pool of one connection with the statement
// cache, as openSQLite does, on a fresh file with a table t(id, v).
func openCachingSQLite(t *testing.T) *sql.DB {
	t.Helper()
	connector, err := sqlite.NewConnector("file:" + filepath.Join(t.TempDir(), "stmts.db"))
	if err != nil {
		t.Fatal(err)
	}
	pool := sql.OpenDB(stmtCachingConnector{connector})
	pool.SetMaxOpenConns(1)
	t.Cleanup(func() { pool.Close() })
	if _, err := pool.Exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		if _, err := pool.Exec("INSERT INTO t (id, v) VALUES ($1, $2)", i, fmt.Sprint("v", i)); err != nil {
			t.Fatal(err)
		}
	}
	return pool
}

// cachedQueries returns the query texts the pool's connection keeps.
func cachedQueries(t *testing.T, pool *sql.DB) map[string]bool {
	t.Helper()
	conn, err := pool.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	got := map[string]bool{}
	err = conn.Raw(func(dc any) error {
		c := dc.(*stmtCachingConn)
		c.mu.Lock()
		defer c.mu.Unlock()
		for q := range c.stmts {
			got[q] = true
		}
		if len(c.stmts) != c.lru.Len() {
			return fmt.Errorf("cache map has %d statements, list %d", len(c.stmts), c.lru.Len())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestStmtCacheReusesStatements(t *testing.T) {
	pool := openCachingSQLite(t)
	const q = "SELECT v FROM t WHERE id = $1"
	for i := 1; i <= 3; i++ {
		var v string
		if err := pool.QueryRow(q, i).Scan(&v); err != nil || v != fmt.Sprint("v", i) {
			t.Fatalf("run %d of a cached query: %q, %v", i, v, err)
		}
	}
	if _, err := pool.Exec("UPDATE t SET v = $1 WHERE id = $2", "w", 2); err != nil {
		t.Fatal(err)
	}
	var v string
	if err := pool.QueryRow(q, 2).Scan(&v); err != nil || v != "w" {
		t.Fatalf("cached query after an update: %q, %v", v, err)
	}
	if got := cachedQueries(t, pool); !got[q] || !got["UPDATE t SET v = $1 WHERE id = $2"] {
		t.Errorf("cache holds %v, want both statements", got)
	}
}

// TestStmtCacheNestedQuery runs a query while rows of the same text are
// open: the inner run must not reset the outer one's statement.
func TestStmtCacheNestedQuery(t *testing.T) {
	pool := openCachingSQLite(t)
	const q = "SELECT id, v FROM t WHERE id >= $1 ORDER BY id"
	tx, err := pool.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	outer, err := tx.Query(q, 1)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for outer.Next() {
		var id int
		var v string
		if err := outer.Scan(&id, &v); err != nil {
			t.Fatal(err)
		}
		inner, err := tx.Query(q, id)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for inner.Next() {
			n++
		}
		if err := errors.Join(inner.Err(), inner.Close()); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s:%d", v, n))
	}
	if err := errors.Join(outer.Err(), outer.Close()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"v1:3", "v2:2", "v3:1"}, got); diff != "" {
		t.Errorf("nested runs (-want +got):\n%s", diff)
	}
}

// TestStmtCacheEvicts keeps at most sqliteStmtCacheSize statements,
// dropping the least recently used, and a statement evicted while its rows
// are open still reads to the end.
func TestStmtCacheEvicts(t *testing.T) {
	pool := openCachingSQLite(t)
	conn, err := pool.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	err = conn.Raw(func(dc any) error {
		c := dc.(*stmtCachingConn)
		ctx := t.Context()
		open, err := c.QueryContext(ctx, "SELECT v FROM t ORDER BY id", nil)
		if err != nil {
			return err
		}
		row := make([]driver.Value, 1)
		if err := open.Next(row); err != nil {
			return err
		}
		for i := range sqliteStmtCacheSize + 10 {
			rows, err := c.QueryContext(ctx, fmt.Sprintf("SELECT count(*) + %d FROM t", i), nil)
			if err != nil {
				return err
			}
			if err := rows.Next(row); err != nil || row[0] != int64(3+i) {
				return fmt.Errorf("query %d: %v, %v", i, row[0], err)
			}
			if err := rows.Close(); err != nil {
				return err
			}
		}
		// The first statement is out of the cache, its rows still read.
		var rest []driver.Value
		for open.Next(row) == nil {
			rest = append(rest, row[0])
		}
		if diff := cmp.Diff([]driver.Value{"v2", "v3"}, rest); diff != "" {
			return fmt.Errorf("rows of an evicted statement (-want +got):\n%s", diff)
		}
		return open.Close()
	})
	conn.Close()
	if err != nil {
		t.Fatal(err)
	}
	got := cachedQueries(t, pool)
	if len(got) != sqliteStmtCacheSize {
		t.Errorf("cache holds %d statements, want %d", len(got), sqliteStmtCacheSize)
	}
	if got["SELECT v FROM t ORDER BY id"] || got["SELECT count(*) + 0 FROM t"] || !got[fmt.Sprintf("SELECT count(*) + %d FROM t", sqliteStmtCacheSize+9)] {
		t.Error("the cache did not drop the least recently used statements")
	}
}

// TestStmtCacheSchemaChange: a cached statement sees a column added after
// it was prepared, and one of a dropped table fails cleanly.
func TestStmtCacheSchemaChange(t *testing.T) {
	pool := openCachingSQLite(t)
	const q = "SELECT * FROM t WHERE id = 1"
	cols := func() []string {
		rows, err := pool.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		c, _ := rows.Columns()
		return c
	}
	if diff := cmp.Diff([]string{"id", "v"}, cols()); diff != "" {
		t.Fatal(diff)
	}
	if _, err := pool.Exec("ALTER TABLE t ADD COLUMN w TEXT"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"id", "v", "w"}, cols()); diff != "" {
		t.Errorf("columns after ALTER TABLE (-want +got):\n%s", diff)
	}
	if _, err := pool.Exec("DROP TABLE t"); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Query(q); err == nil {
		t.Error("cached query of a dropped table succeeded")
	}
}

// TestStmtCacheCanceledContext: a query whose context ends while its rows
// are open leaves the cached statement usable.
func TestStmtCacheCanceledContext(t *testing.T) {
	pool := openCachingSQLite(t)
	const q = "SELECT v FROM t ORDER BY id"
	ctx, cancel := context.WithCancel(t.Context())
	rows, err := pool.QueryContext(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	rows.Next()
	cancel()
	for rows.Next() {
	}
	rows.Close()
	var v string
	if err := pool.QueryRow(q).Scan(&v); err != nil || v != "v1" {
		t.Errorf("cached query after a canceled run: %q, %v", v, err)
	}
	if _, err := pool.ExecContext(ctx, "UPDATE t SET v = 'x'"); !errors.Is(err, context.Canceled) {
		t.Errorf("exec with an ended context: %v, want context.Canceled", err)
	}
	if err := pool.QueryRow("SELECT v FROM t WHERE id = 3").Scan(&v); err != nil || v != "v3" {
		t.Errorf("after a canceled exec: %q, %v", v, err)
	}
}
