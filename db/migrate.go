package db

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/riverqueue/river/rivermigrate"
)

// migrationFiles holds our schema, one folder per engine. File names are
// NNNN_name.sql; both folders carry the same versions.
//
//go:embed migrations/sqlite/*.sql migrations/postgres/*.sql
var migrationFiles embed.FS

// migration is one embedded schema change.
type migration struct {
	version int
	name    string
	sql     string
}

// migrations returns the engine's migrations in version order.
func migrations(e Engine) ([]migration, error) {
	dir := "migrations/" + string(e)
	entries, err := fs.ReadDir(migrationFiles, dir)
	if err != nil {
		return nil, fmt.Errorf("read embedded migrations %s: %w", dir, err)
	}
	var ms []migration
	seen := map[int]string{}
	for _, ent := range entries {
		num, name, ok := strings.Cut(strings.TrimSuffix(ent.Name(), ".sql"), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("embedded migration %s/%s: name it NNNN_what.sql", dir, ent.Name())
		}
		if prev, dup := seen[v]; dup {
			return nil, fmt.Errorf("embedded migrations %s and %s share version %d", prev, ent.Name(), v)
		}
		seen[v] = ent.Name()
		body, err := migrationFiles.ReadFile(path.Join(dir, ent.Name()))
		if err != nil {
			return nil, fmt.Errorf("read embedded migration %s: %w", ent.Name(), err)
		}
		ms = append(ms, migration{version: v, name: name, sql: string(body)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	return ms, nil
}

// schemaMigrationsDDL creates the table recording our applied migrations.
var schemaMigrationsDDL = map[Engine]string{
	SQLite: `CREATE TABLE IF NOT EXISTS schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at TEXT NOT NULL
)`,
	Postgres: `CREATE TABLE IF NOT EXISTS schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at TIMESTAMPTZ NOT NULL
)`,
}

// Migrate brings the schema up to date: River's job tables first, then our
// migrations in version order, each in its own transaction together with its
// schema_migrations row. Running it again is a no-op; on PostgreSQL
// concurrent runs wait for each other.
func (d *DB) Migrate(ctx context.Context) error {
	ms, err := migrations(d.eng.kind())
	if err != nil {
		return err
	}
	d.migrating.Lock()
	defer d.migrating.Unlock()
	unlock, err := d.eng.lockMigrations(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer unlock()

	if err := d.eng.migrateRiver(ctx); err != nil {
		return fmt.Errorf("migrate River job tables: %w", err)
	}
	if _, err := d.eng.querier().exec(ctx, schemaMigrationsDDL[d.eng.kind()]); err != nil {
		return fmt.Errorf("migrate: create schema_migrations: %w", err)
	}
	dia := d.eng.dialect()
	for _, m := range ms {
		err := d.eng.withTx(ctx, func(q querier, _ jobInserter) error {
			var n int
			if err := q.queryRow(ctx, "SELECT count(*) FROM schema_migrations WHERE version = $1", m.version).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return nil
			}
			if _, err := q.exec(ctx, m.sql); err != nil {
				return err
			}
			_, err := q.exec(ctx, "INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)",
				m.version, m.name, dia.time(now()))
			return err
		})
		if err != nil {
			return fmt.Errorf("migrate %04d_%s: %w", m.version, m.name, err)
		}
	}
	return nil
}

// Ready reports whether the database answers and every migration, ours and
// River's, is applied. It is what GET /readyz asks. The error says what is
// missing and how to fix it.
func (d *DB) Ready(ctx context.Context) error {
	if err := d.eng.ping(ctx); err != nil {
		return fmt.Errorf("database unreachable: %w", err)
	}
	ms, err := migrations(d.eng.kind())
	if err != nil {
		return err
	}
	applied := map[int]bool{}
	rs, err := d.eng.querier().query(ctx, "SELECT version FROM schema_migrations")
	if err != nil {
		return fmt.Errorf("database not migrated (no schema_migrations table: %v): run `testfirst migrate`", err)
	}
	defer rs.Close()
	for rs.Next() {
		var v int
		if err := rs.Scan(&v); err != nil {
			return fmt.Errorf("read schema_migrations: %w", err)
		}
		applied[v] = true
	}
	if err := rs.Err(); err != nil {
		return fmt.Errorf("read schema_migrations: %w", err)
	}
	var pending []string
	for _, m := range ms {
		if !applied[m.version] {
			pending = append(pending, fmt.Sprintf("%04d_%s", m.version, m.name))
		}
	}
	if len(pending) > 0 {
		return fmt.Errorf("database migrations pending (%s): run `testfirst migrate`", strings.Join(pending, ", "))
	}
	riverPending, err := d.eng.pendingRiver(ctx)
	if err != nil {
		return fmt.Errorf("check River job tables: %w: run `testfirst migrate`", err)
	}
	if len(riverPending) > 0 {
		return fmt.Errorf("River job-table migrations pending (versions %v): run `testfirst migrate`", riverPending)
	}
	return nil
}

// pendingRiver lists River's migrations not yet applied.
func pendingRiver[TTx any](ctx context.Context, m *rivermigrate.Migrator[TTx]) ([]int, error) {
	existing, err := m.ExistingVersions(ctx)
	if err != nil {
		return nil, err
	}
	have := map[int]bool{}
	for _, e := range existing {
		have[e.Version] = true
	}
	var pending []int
	for _, a := range m.AllVersions() {
		if !have[a.Version] {
			pending = append(pending, a.Version)
		}
	}
	return pending, nil
}

// quietLogger keeps River's migrator from logging each step to stdout.
func quietLogger() *slog.Logger {
	return slog.New(slog.DiscardHandler)
}
