package db

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgxpool"
)

// postgresURLEnv names the server the PostgreSQL half of the suite uses;
// scripts/ensure-deps.sh starts one at the default below.
const postgresURLEnv = "TESTFIRST_TEST_POSTGRES_URL"

// testEngine opens a fresh, empty database of one engine.
type testEngine struct {
	name string
	open func(t *testing.T) *DB
}

// engines lists SQLite always and PostgreSQL when TESTFIRST_TEST_POSTGRES_URL
// is set. Without it the PostgreSQL cases skip, or fail when
// TESTFIRST_REQUIRE_DOCKER is set (make test, CI).
func engines() []testEngine {
	return []testEngine{
		{name: "sqlite", open: openTestSQLite},
		{name: "postgres", open: openTestPostgres},
	}
}

func openTestSQLite(t *testing.T) *DB {
	t.Helper()
	d, err := Open(t.Context(), "sqlite://"+filepath.Join(t.TempDir(), "testfirst.db"))
	if err != nil {
		t.Fatalf("open SQLite: %v", err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

// openTestPostgres gives the test a schema of its own, dropped afterwards,
// and points the connection's search_path at it.
func openTestPostgres(t *testing.T) *DB {
	t.Helper()
	base := os.Getenv(postgresURLEnv)
	if base == "" {
		if os.Getenv("TESTFIRST_REQUIRE_DOCKER") != "" {
			t.Fatalf("%s is not set and TESTFIRST_REQUIRE_DOCKER is: run scripts/ensure-deps.sh and set %s=postgres://testfirst:testfirst@127.0.0.1:5432/testfirst?sslmode=disable", postgresURLEnv, postgresURLEnv)
		}
		t.Skipf("%s not set: PostgreSQL tests skipped", postgresURLEnv)
	}
	ctx := context.Background()
	admin, err := pgxpool.New(ctx, base)
	if err != nil {
		t.Fatalf("connect to %s: %v", postgresURLEnv, err)
	}
	t.Cleanup(admin.Close)
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "tf_test_" + hex.EncodeToString(b[:])
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create schema %s: %v", schema, err)
	}
	t.Cleanup(func() {
		if _, err := admin.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	d, err := Open(t.Context(), base+sep+"search_path="+schema)
	if err != nil {
		t.Fatalf("open PostgreSQL: %v", err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

// forEachEngine runs test against a fresh database of every engine.
func forEachEngine(t *testing.T, migrate bool, test func(t *testing.T, d *DB)) {
	for _, e := range engines() {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			d := e.open(t)
			if migrate {
				if err := d.Migrate(t.Context()); err != nil {
					t.Fatalf("Migrate: %v", err)
				}
			}
			test(t, d)
		})
	}
}

// count returns SELECT count(*) for a query of this package's dialect.
func count(t *testing.T, d *DB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := d.eng.querier().queryRow(t.Context(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

func TestMigrateTwiceIsNoOp(t *testing.T) {
	forEachEngine(t, true, func(t *testing.T, d *DB) {
		before := count(t, d, "SELECT count(*) FROM schema_migrations")
		ms, err := migrations(d.Engine())
		if err != nil {
			t.Fatal(err)
		}
		if before != len(ms) {
			t.Fatalf("schema_migrations has %d rows, want %d", before, len(ms))
		}
		if err := d.Migrate(t.Context()); err != nil {
			t.Fatalf("second Migrate: %v", err)
		}
		if after := count(t, d, "SELECT count(*) FROM schema_migrations"); after != before {
			t.Fatalf("second Migrate changed schema_migrations: %d rows, want %d", after, before)
		}
		if err := d.Ready(t.Context()); err != nil {
			t.Fatalf("Ready after second Migrate: %v", err)
		}
	})
}

func TestReady(t *testing.T) {
	forEachEngine(t, false, func(t *testing.T, d *DB) {
		err := d.Ready(t.Context())
		if err == nil {
			t.Fatal("Ready before Migrate: nil error, want one")
		}
		if !strings.Contains(err.Error(), "testfirst migrate") {
			t.Errorf("Ready before Migrate: %q does not say to run `testfirst migrate`", err)
		}
		if err := d.Migrate(t.Context()); err != nil {
			t.Fatalf("Migrate: %v", err)
		}
		if err := d.Ready(t.Context()); err != nil {
			t.Fatalf("Ready after Migrate: %v", err)
		}
		// A migration row gone (a newer binary on an older schema) is reported.
		if _, err := d.eng.querier().exec(t.Context(), "DELETE FROM schema_migrations WHERE version = 1"); err != nil {
			t.Fatal(err)
		}
		err = d.Ready(t.Context())
		if err == nil || !strings.Contains(err.Error(), "0001_init") {
			t.Errorf("Ready with 0001 missing: %v, want it named", err)
		}
	})
}

func TestConcurrentMigrate(t *testing.T) {
	forEachEngine(t, false, func(t *testing.T, d *DB) {
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for range 4 {
			wg.Go(func() { errs <- d.Migrate(t.Context()) })
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Errorf("concurrent Migrate: %v", err)
			}
		}
		if err := d.Ready(t.Context()); err != nil {
			t.Fatalf("Ready: %v", err)
		}
	})
}

func TestRecordDeliveryDedupe(t *testing.T) {
	forEachEngine(t, true, func(t *testing.T, d *DB) {
		del := Delivery{ID: "d-1", Event: "issues", Action: "labeled", Installation: 42, ReceivedAt: time.Now()}
		dup, err := d.RecordDelivery(t.Context(), nil, del)
		if err != nil || dup {
			t.Fatalf("first RecordDelivery = %v, %v; want false, nil", dup, err)
		}
		dup, err = d.RecordDelivery(t.Context(), nil, del)
		if err != nil || !dup {
			t.Fatalf("second RecordDelivery = %v, %v; want true, nil", dup, err)
		}
		// Inside a caller's transaction too.
		err = d.Tx(t.Context(), func(tx *Tx) error {
			dup, err := d.RecordDelivery(t.Context(), tx, del)
			if err != nil || !dup {
				return fmt.Errorf("RecordDelivery in Tx = %v, %v; want true, nil", dup, err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.RecordDelivery(t.Context(), nil, Delivery{Event: "ping"}); err == nil {
			t.Error("RecordDelivery without id: nil error, want one")
		}
	})
}

func TestRecordDeliveryConcurrent(t *testing.T) {
	forEachEngine(t, true, func(t *testing.T, d *DB) {
		const workers = 16
		var (
			wg    sync.WaitGroup
			mu    sync.Mutex
			fresh int
			errs  []error
		)
		start := make(chan struct{})
		for range workers {
			wg.Go(func() {
				<-start
				dup, err := d.RecordDelivery(t.Context(), nil, Delivery{ID: "same", Event: "pull_request", Action: "opened"})
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, err)
				} else if !dup {
					fresh++
				}
			})
		}
		close(start)
		wg.Wait()
		if len(errs) > 0 {
			t.Fatalf("RecordDelivery errors: %v", errs)
		}
		if fresh != 1 {
			t.Fatalf("%d of %d concurrent RecordDelivery calls were not duplicates, want exactly 1", fresh, workers)
		}
		if n := count(t, d, "SELECT count(*) FROM deliveries"); n != 1 {
			t.Fatalf("deliveries has %d rows, want 1", n)
		}
	})
}

func TestPruneDeliveries(t *testing.T) {
	forEachEngine(t, true, func(t *testing.T, d *DB) {
		ctx := t.Context()
		cutoff := time.Now().Add(-DeliveryRetention)
		for _, del := range []Delivery{
			{ID: "old", Event: "ping", ReceivedAt: cutoff.Add(-time.Hour)},
			{ID: "just-old", Event: "ping", ReceivedAt: cutoff.Add(-time.Millisecond)},
			{ID: "just-young", Event: "ping", ReceivedAt: cutoff.Add(time.Millisecond)},
			{ID: "young", Event: "ping", ReceivedAt: time.Now()},
		} {
			if _, err := d.RecordDelivery(ctx, nil, del); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := d.PruneDeliveries(ctx, time.Now().Add(-time.Hour)); err == nil {
			t.Error("PruneDeliveries with a 1h cutoff: nil error, want a refusal")
		}
		n, err := d.PruneDeliveries(ctx, cutoff)
		if err != nil {
			t.Fatalf("PruneDeliveries: %v", err)
		}
		if n != 2 {
			t.Errorf("PruneDeliveries deleted %d, want 2", n)
		}
		for id, want := range map[string]bool{"old": false, "just-old": false, "just-young": true, "young": true} {
			if got := count(t, d, "SELECT count(*) FROM deliveries WHERE id = $1", id) == 1; got != want {
				t.Errorf("delivery %s kept = %v, want %v", id, got, want)
			}
		}
		// A redelivery of a kept one is still a duplicate.
		if dup, err := d.RecordDelivery(ctx, nil, Delivery{ID: "just-young", Event: "ping"}); err != nil || !dup {
			t.Errorf("RecordDelivery of kept id = %v, %v; want true, nil", dup, err)
		}
	})
}

// TestDeliveryPayload records deliveries with and without a payload and
// reads them back; a pruned delivery's payload is gone with it.
func TestDeliveryPayload(t *testing.T) {
	forEachEngine(t, true, func(t *testing.T, d *DB) {
		ctx := t.Context()
		body := []byte(`{"action":"added","installation":{"id":1},"note":"bytes kept as signed \u00e9 \n"}` + "\n")
		old := time.Now().Add(-DeliveryRetention - time.Hour)
		for _, del := range []Delivery{
			{ID: "with", Event: "installation_repositories", Action: "added", Payload: body},
			{ID: "without", Event: "issues", Action: "assigned"},
			{ID: "old", Event: "installation_repositories", Action: "added", Payload: body, ReceivedAt: old},
		} {
			if _, err := d.RecordDelivery(ctx, nil, del); err != nil {
				t.Fatal(err)
			}
		}
		// A redelivery does not replace the recorded payload.
		if dup, err := d.RecordDelivery(ctx, nil, Delivery{ID: "with", Event: "installation_repositories", Payload: []byte(`{}`)}); err != nil || !dup {
			t.Fatalf("redelivery = %v, %v; want duplicate", dup, err)
		}
		got, err := d.DeliveryPayload(ctx, "with")
		if err != nil || string(got) != string(body) {
			t.Errorf("DeliveryPayload(with) = %q, %v; want %q", got, err, body)
		}
		if _, err := d.PruneDeliveries(ctx, time.Now().Add(-DeliveryRetention)); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"without", "old", "never"} {
			if got, err := d.DeliveryPayload(ctx, id); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), id) {
				t.Errorf("DeliveryPayload(%s) = %q, %v; want ErrNotFound naming it", id, got, err)
			}
		}
	})
}

// TestRecordDeliveries records a batch holding a delivery recorded before
// and one repeated within the batch, in one transaction, and checks the
// duplicates it reports and the rows it leaves.
func TestRecordDeliveries(t *testing.T) {
	forEachEngine(t, true, func(t *testing.T, d *DB) {
		ctx := t.Context()
		if _, err := d.RecordDelivery(ctx, nil, Delivery{ID: "before", Event: "issues"}); err != nil {
			t.Fatal(err)
		}
		batch := []Delivery{
			{ID: "a", Event: "installation", Action: "created", Installation: 7, Payload: []byte(`{"a":1}`)},
			{ID: "before", Event: "issues", Action: "assigned"},
			{ID: "b", Event: "issues", Action: "assigned", Installation: 7},
			{ID: "a", Event: "installation", Action: "created", Installation: 7, Payload: []byte(`{"a":2}`)},
		}
		var dup []bool
		err := d.Tx(ctx, func(tx *Tx) error {
			var err error
			dup, err = tx.RecordDeliveries(ctx, batch)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]bool{false, true, false, true}, dup); diff != "" {
			t.Errorf("duplicates (-want +got):\n%s", diff)
		}
		if n := count(t, d, "SELECT count(*) FROM deliveries"); n != 3 {
			t.Errorf("deliveries has %d rows, want 3", n)
		}
		if n := count(t, d, "SELECT count(*) FROM deliveries WHERE id = 'b' AND event = 'issues' AND action = 'assigned' AND installation_id = 7 AND payload IS NULL"); n != 1 {
			t.Error("delivery b not recorded as given")
		}
		if p, err := d.DeliveryPayload(ctx, "a"); err != nil || string(p) != `{"a":1}` {
			t.Errorf("payload of a = %s, %v; want the first one's", p, err)
		}
		// More rows than one statement takes.
		many := make([]Delivery, recordRows+5)
		for i := range many {
			many[i] = Delivery{ID: fmt.Sprintf("many-%d", i), Event: "ping"}
		}
		err = d.Tx(ctx, func(tx *Tx) error {
			dup, err := tx.RecordDeliveries(ctx, many)
			if err == nil && slices.Contains(dup, true) {
				err = fmt.Errorf("fresh deliveries reported duplicate: %v", dup)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if n := count(t, d, "SELECT count(*) FROM deliveries WHERE id LIKE 'many-%'"); n != len(many) {
			t.Errorf("%d of %d deliveries recorded", n, len(many))
		}
		// An empty id fails the batch and records none of it.
		err = d.Tx(ctx, func(tx *Tx) error {
			_, err := tx.RecordDeliveries(ctx, []Delivery{{ID: "c", Event: "ping"}, {Event: "ping"}})
			return err
		})
		if err == nil || !strings.Contains(err.Error(), "empty id") {
			t.Errorf("batch with an empty id: %v, want an error saying so", err)
		}
		if n := count(t, d, "SELECT count(*) FROM deliveries WHERE id = 'c'"); n != 0 {
			t.Error("a failed batch recorded a delivery")
		}
	})
}

// TestSQLiteFilesAreTheOwners: the database holds grade reports (runner
// output quoting hidden tests, for the requester only) and sessions' audit;
// its file and the WAL beside it are readable by the service's user only,
// whatever the umask, and a file an older version made 0644 is narrowed.
func TestSQLiteFilesAreTheOwners(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "old.db")
	if err := os.WriteFile(old, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(dir, "new.db"), old} {
		d, err := Open(t.Context(), "sqlite://"+path)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Migrate(t.Context()); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{path, path + "-wal", path + "-shm"} {
			st, err := os.Stat(f)
			if err != nil {
				t.Fatal(err)
			}
			if m := st.Mode().Perm(); m != 0o600 {
				t.Errorf("%s is %v, want 0600", filepath.Base(f), m)
			}
		}
		d.Close()
	}
}

// TestEndedSessions: a signed-out session is known as ended to every
// replica reading the database, until its cookie would have expired.
func TestEndedSessions(t *testing.T) {
	forEachEngine(t, true, func(t *testing.T, d *DB) {
		ctx := t.Context()
		if err := d.Tx(ctx, func(tx *Tx) error { return tx.EndSession(ctx, "abc", time.Now().Add(time.Hour)) }); err != nil {
			t.Fatal(err)
		}
		for id, want := range map[string]bool{"abc": true, "abd": false} {
			var got bool
			if err := d.Tx(ctx, func(tx *Tx) error { var err error; got, err = tx.SessionEnded(ctx, id); return err }); err != nil || got != want {
				t.Errorf("SessionEnded(%q) = %v, %v; want %v", id, got, err, want)
			}
		}
		// Ending again is no error.
		if err := d.Tx(ctx, func(tx *Tx) error { return tx.EndSession(ctx, "abc", time.Now().Add(time.Hour)) }); err != nil {
			t.Error(err)
		}
	})
}
