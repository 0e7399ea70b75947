package bench

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/jobs"
)

// benchFixtures holds real webhook payloads as GitHub sends them: beside
// the repository, or where TESTFIRST_WEBHOOK_FIXTURES says.
var benchFixtures = cmp.Or(os.Getenv("TESTFIRST_WEBHOOK_FIXTURES"), filepath.Join("..", "..", "..", "shared", "fixtures", "github-webhooks"))

// TestBenchIntakeExactlyOnce runs the intake benchmark small, on SQLite and
// on PostgreSQL when TESTFIRST_TEST_POSTGRES_URL is set, and checks its
// exactly-once verification. It never looks at timings.
func TestBenchIntakeExactlyOnce(t *testing.T) {
	urls := map[string]string{"sqlite": ""}
	if u := os.Getenv("TESTFIRST_TEST_POSTGRES_URL"); u != "" {
		urls["postgres"] = u
	}
	for name, url := range urls {
		t.Run(name, func(t *testing.T) {
			res, err := BenchIntake(t.Context(), BenchIntakeConfig{DatabaseURL: url, Deliveries: 200, Concurrency: 16, Burst: 200, Fixtures: benchFixtures})
			if err != nil {
				t.Fatal(err)
			}
			if err := res.Verify(); err != nil {
				t.Fatalf("%v (result %+v)", err, res)
			}
			// 200 over HTTP (half need a job) and 200 in the burst.
			if res.Recorded != 400 || res.Jobs != 300 || res.Drained != 300 || res.Redelivered != 100 || len(res.Latencies) != 200 {
				t.Errorf("recorded %d, jobs %d, drained %d, redelivered %d, latencies %d; want 400, 300, 300, 100, 200",
					res.Recorded, res.Jobs, res.Drained, res.Redelivered, len(res.Latencies))
			}
		})
	}
}

// TestBenchIntakeWithoutBurstCleansUp: a run that drains nothing leaves
// none of its jobs behind for the next run's drain.
func TestBenchIntakeWithoutBurstCleansUp(t *testing.T) {
	url := "sqlite://" + filepath.Join(t.TempDir(), "testfirst.db")
	res, err := BenchIntake(t.Context(), BenchIntakeConfig{DatabaseURL: url, Deliveries: 20, Concurrency: 4, Fixtures: benchFixtures})
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Verify(); err != nil || res.Jobs != 10 {
		t.Fatalf("%v, %d jobs (result %+v)", err, res.Jobs, res)
	}
	d, err := db.Open(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	counter, err := openBenchCounter(t.Context(), d.Engine(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer counter.close()
	if n, err := counter.count(t.Context(), "SELECT count(*) FROM river_job"); err != nil || n != 0 {
		t.Errorf("%d jobs left after the run, %v; want 0", n, err)
	}
}

// TestBenchIntakeVerifyCatchesLoss checks that Verify fails when a row is
// missing or an answer was not 202.
func TestBenchIntakeVerifyCatchesLoss(t *testing.T) {
	ok := BenchIntakeResult{Recorded: 4, WantRecorded: 4, Jobs: 2, WantJobs: 2}
	if err := ok.Verify(); err != nil {
		t.Fatalf("Verify of a clean run: %v", err)
	}
	for _, bad := range []BenchIntakeResult{
		{Recorded: 3, WantRecorded: 4, Jobs: 2, WantJobs: 2},
		{Recorded: 4, WantRecorded: 4, Jobs: 3, WantJobs: 2},
		{Recorded: 4, WantRecorded: 4, Jobs: 2, WantJobs: 2, Failures: 1},
		{Recorded: 4, WantRecorded: 4, Jobs: 2, WantJobs: 2, Burst: 1, Drained: 1},
	} {
		if bad.Verify() == nil {
			t.Errorf("Verify(%+v) = nil, want an error", bad)
		}
	}
}

// TestIntakeGroupCommit sends 200 concurrent Accepts of 100 distinct
// deliveries, each twice: group commit must record each once, call exactly
// one of the two a duplicate, and enqueue one job per delivery.
func TestIntakeGroupCommit(t *testing.T) {
	ctx := t.Context()
	url := "sqlite://" + filepath.Join(t.TempDir(), "testfirst.db")
	d, err := db.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	if err := d.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	body, err := os.ReadFile(filepath.Join(benchFixtures, "installation_repositories", "added.payload.json"))
	if err != nil {
		t.Fatal(err)
	}
	in := jobs.NewIntake(d)
	const distinct = 100
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		fresh     = map[string]int{}
		dups      int
		failures  []error
		run       = benchRunID()
		startLine = make(chan struct{})
	)
	for i := range 2 * distinct {
		wg.Go(func() {
			<-startLine
			id := fmt.Sprintf("%s-%d", run, i%distinct)
			// Each delivery its own body; its second time, as GitHub
			// redelivers, the same id and body.
			payload, _ := benchPayload{body: body}.numbered(id)
			dup, err := in.Accept(ctx, github.Delivery{ID: id, Event: "installation_repositories", Action: "added", Installation: 957387, Handled: true, Payload: payload})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				failures = append(failures, err)
			case dup:
				dups++
			default:
				fresh[id]++
			}
		})
	}
	close(startLine)
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("Accept failed %d times, first: %v", len(failures), failures[0])
	}
	if len(fresh) != distinct || dups != distinct {
		t.Errorf("%d distinct non-duplicates and %d duplicates, want %d and %d", len(fresh), dups, distinct, distinct)
	}
	for id, n := range fresh {
		if n != 1 {
			t.Errorf("delivery %s accepted as new %d times", id, n)
		}
	}
	counter, err := openBenchCounter(ctx, d.Engine(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer counter.close()
	if n, err := counter.deliveries(ctx, run); err != nil || n != distinct {
		t.Errorf("deliveries recorded = %d, %v; want %d", n, err, distinct)
	}
	if n, err := counter.jobs(ctx, run, false); err != nil || n != distinct {
		t.Errorf("jobs enqueued = %d, %v; want %d", n, err, distinct)
	}
}

// TestIntakeGroupCommitIsolatesFailures checks that a delivery whose
// context has ended fails alone and is not recorded, while the others in
// its batch commit.
func TestIntakeGroupCommitIsolatesFailures(t *testing.T) {
	ctx := t.Context()
	url := "sqlite://" + filepath.Join(t.TempDir(), "testfirst.db")
	d, err := db.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	if err := d.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	in := jobs.NewIntake(d)
	run := benchRunID()
	gone, cancel := context.WithCancel(ctx)
	cancel()
	var wg sync.WaitGroup
	errs := make([]error, 10)
	for i := range errs {
		wg.Go(func() {
			c := ctx
			if i == 0 {
				c = gone
			}
			_, errs[i] = in.Accept(c, github.Delivery{ID: fmt.Sprintf("%s-%d", run, i), Event: "issues", Action: "assigned", Handled: true})
		})
	}
	wg.Wait()
	if errs[0] == nil {
		t.Error("Accept with an ended context succeeded")
	}
	for i, err := range errs[1:] {
		if err != nil {
			t.Errorf("Accept %d: %v", i+1, err)
		}
	}
	counter, err := openBenchCounter(ctx, d.Engine(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer counter.close()
	if n, err := counter.deliveries(ctx, run); err != nil || n != 9 {
		t.Errorf("deliveries recorded = %d, %v; want 9", n, err)
	}
}
