package db

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/riverqueue/river"
)

// recordArgs is a job that reports its note to the test's worker.
type recordArgs struct {
	Note string `json:"note"`
}

func (recordArgs) Kind() string { return "testfirst_db_test_record" }

type recordWorker struct {
	river.WorkerDefaults[recordArgs]
	seen chan string
}

func (w *recordWorker) Work(_ context.Context, job *river.Job[recordArgs]) error {
	w.seen <- job.Args.Note
	return nil
}

var errRollback = errors.New("roll back on purpose")

func TestJobInsertedInTransaction(t *testing.T) {
	forEachEngine(t, true, func(t *testing.T, d *DB) {
		ctx := t.Context()
		jobs := func(note string) int {
			return count(t, d, "SELECT count(*) FROM river_job WHERE kind = $1 AND args->>'note' = $2",
				recordArgs{}.Kind(), note)
		}

		err := d.Tx(ctx, func(tx *Tx) error {
			if _, err := tx.RecordDelivery(ctx, Delivery{ID: "rolled-back", Event: "issues"}); err != nil {
				return err
			}
			if err := tx.InsertJob(ctx, recordArgs{Note: "rolled-back"}, nil); err != nil {
				return err
			}
			return errRollback
		})
		if !errors.Is(err, errRollback) {
			t.Fatalf("Tx = %v, want %v", err, errRollback)
		}
		if n := jobs("rolled-back"); n != 0 {
			t.Fatalf("job from a rolled-back transaction: %d rows, want 0", n)
		}
		if n := count(t, d, "SELECT count(*) FROM deliveries WHERE id = 'rolled-back'"); n != 0 {
			t.Fatalf("delivery from a rolled-back transaction: %d rows, want 0", n)
		}

		err = d.Tx(ctx, func(tx *Tx) error {
			if _, err := tx.RecordDelivery(ctx, Delivery{ID: "committed", Event: "issues"}); err != nil {
				return err
			}
			if err := tx.InsertJob(ctx, recordArgs{Note: "committed"}, nil); err != nil {
				return err
			}
			return tx.InsertJobs(ctx, []river.InsertManyParams{{Args: recordArgs{Note: "batch-1"}}, {Args: recordArgs{Note: "batch-2"}}})
		})
		if err != nil {
			t.Fatalf("Tx: %v", err)
		}
		for _, note := range []string{"committed", "batch-1", "batch-2"} {
			if n := jobs(note); n != 1 {
				t.Fatalf("job %q from a committed transaction: %d rows, want 1", note, n)
			}
		}

		// A worker started on this database works the committed jobs and
		// never sees the rolled-back one.
		w := &recordWorker{seen: make(chan string, 8)}
		workers := river.NewWorkers()
		river.AddWorker(workers, w)
		client, err := d.NewJobClient(workers, map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 2}},
			WithRiverConfig(func(c *river.Config) {
				c.FetchPollInterval = 50 * time.Millisecond
				c.FetchCooldown = 10 * time.Millisecond
				c.Logger = quietLogger()
			}))
		if err != nil {
			t.Fatalf("NewJobClient: %v", err)
		}
		if err := client.Start(ctx); err != nil {
			t.Fatalf("Start: %v", err)
		}
		t.Cleanup(func() {
			stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := client.Stop(stopCtx); err != nil {
				t.Errorf("Stop: %v", err)
			}
		})
		got := map[string]bool{}
		timeout := time.After(30 * time.Second)
		for len(got) < 3 {
			select {
			case note := <-w.seen:
				if note == "rolled-back" {
					t.Fatal("worker ran the rolled-back job")
				}
				got[note] = true
			case <-timeout:
				t.Fatalf("worker saw %v within 30s, want committed, batch-1, batch-2", got)
			}
		}
	})
}

// TestJobConfigFetchTiming: job clients fetch with JobFetchCooldown and the
// engine's poll interval unless an option says otherwise.
func TestJobConfigFetchTiming(t *testing.T) {
	forEachEngine(t, false, func(t *testing.T, d *DB) {
		want := map[Engine]time.Duration{SQLite: sqliteFetchPollInterval, Postgres: river.FetchPollIntervalDefault}[d.Engine()]
		cfg := d.jobConfig(river.NewWorkers(), nil, nil)
		if cfg.FetchCooldown != JobFetchCooldown || cfg.FetchPollInterval != want {
			t.Errorf("fetch cooldown %s, poll %s; want %s, %s", cfg.FetchCooldown, cfg.FetchPollInterval, JobFetchCooldown, want)
		}
		cfg = d.jobConfig(river.NewWorkers(), nil, []JobClientOption{WithRiverConfig(func(c *river.Config) { c.FetchCooldown = time.Second })})
		if cfg.FetchCooldown != time.Second {
			t.Errorf("fetch cooldown %s after an option set 1s", cfg.FetchCooldown)
		}
	})
}
