package bench

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"

	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/handlers"
	"github.com/testfirst-app/testfirst/jobs"
)

// Limits of the intake benchmark, so a mistyped flag cannot run away.
const (
	BenchIntakeMaxDeliveries  = 1_000_000
	BenchIntakeMaxConcurrency = 1024
	benchRequestTimeout       = 30 * time.Second
	benchSecret               = "bench-intake-secret"
)

// BenchIntakeConfig says what BenchIntake sends.
type BenchIntakeConfig struct {
	// DatabaseURL is the database to record into; empty means a fresh
	// SQLite file in a temporary directory, removed afterwards.
	DatabaseURL string
	// Deliveries is how many signed deliveries go over HTTP, alternately
	// issues/assigned (recorded, no job) and installation_repositories/added
	// (one job each).
	Deliveries int
	// Concurrency is how many requests are in flight at once.
	Concurrency int
	// Burst is how many deliveries that each need a job are recorded
	// before a no-op worker drains them; 0 skips the drain.
	Burst int
	// Fixtures is the github-webhooks fixture directory.
	Fixtures string
	// Log receives the server's logs.
	Log *slog.Logger
}

// BenchIntakeResult is what BenchIntake measured.
type BenchIntakeResult struct {
	Engine     db.Engine
	Deliveries int           // sent over HTTP
	Elapsed    time.Duration // for all of them
	Latencies  []time.Duration
	// Failures counts answers other than 202 and transport errors.
	Failures int
	// Recorded and Jobs are the rows this run left in the deliveries table
	// and River's job table; WantRecorded and WantJobs what exactly-once
	// requires.
	Recorded, Jobs         int64
	WantRecorded, WantJobs int64
	// Redelivered is how many deliveries were sent a second time; each must
	// be answered 202 and change nothing.
	Redelivered int

	Burst       int
	BurstInsert time.Duration // recording the burst
	Drained     int64         // jobs worked off (burst plus HTTP jobs)
	Drain       time.Duration // from starting the workers to the last job completed
}

// Rate is deliveries per second over HTTP.
func (r BenchIntakeResult) Rate() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Deliveries) / r.Elapsed.Seconds()
}

// Percentile returns the p-th percentile (0–100) of the ack latencies.
func (r BenchIntakeResult) Percentile(p float64) time.Duration {
	if len(r.Latencies) == 0 {
		return 0
	}
	s := slices.Clone(r.Latencies)
	slices.Sort(s)
	i := int(float64(len(s))*p/100+0.999999) - 1
	return s[max(0, min(i, len(s)-1))]
}

// Verify reports whether every delivery was answered 202 and recorded
// exactly once with exactly the jobs it needs.
func (r BenchIntakeResult) Verify() error {
	var errs []error
	if r.Failures > 0 {
		errs = append(errs, fmt.Errorf("%d deliveries were not answered 202", r.Failures))
	}
	if r.Recorded != r.WantRecorded {
		errs = append(errs, fmt.Errorf("%d deliveries recorded, want %d", r.Recorded, r.WantRecorded))
	}
	if r.Jobs != r.WantJobs {
		errs = append(errs, fmt.Errorf("%d jobs enqueued, want %d", r.Jobs, r.WantJobs))
	}
	if r.Burst > 0 && r.Drained != r.WantJobs {
		errs = append(errs, fmt.Errorf("%d jobs worked off, want %d", r.Drained, r.WantJobs))
	}
	return errors.Join(errs...)
}

// benchPayload is one fixture delivery. Each delivery sends it as its own
// body (see numbered): the intake takes the same body under another
// delivery id for a duplicate, as it is when someone sends a signed body
// again, and GitHub's deliveries all differ.
type benchPayload struct {
	event    string
	body     []byte
	needsJob bool
}

// numbered returns the fixture's body made delivery id's own, by a first
// member "bench_delivery": id (ids are unique across runs, which may share
// a database), and its X-Hub-Signature-256.
func (p benchPayload) numbered(id string) ([]byte, string) {
	body := make([]byte, 0, len(p.body)+len(id)+24)
	body = append(body, `{"bench_delivery":`...)
	body = strconv.AppendQuote(body, id)
	body = append(body, ',')
	body = append(body, bytes.TrimLeft(p.body, " \t\r\n")[1:]...)
	mac := hmac.New(sha256.New, []byte(benchSecret))
	mac.Write(body)
	return body, "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

func loadBenchPayload(dir, event, action string) (benchPayload, error) {
	body, err := os.ReadFile(filepath.Join(dir, event, action+".payload.json"))
	if err != nil {
		return benchPayload{}, fmt.Errorf("read fixture: %w: pass --fixtures DIR, the github-webhooks fixture directory", err)
	}
	return benchPayload{event: event, body: body, needsJob: jobs.NeedsJob(event, action)}, nil
}

// BenchIntake starts the webhook stack as Serve builds it on a loopback
// port, sends cfg.Deliveries signed deliveries at cfg.Concurrency, checks
// that each was recorded exactly once, and then times how long River takes
// to work off a burst of cfg.Burst job-carrying deliveries with a no-op
// worker. GitHub is never called.
func BenchIntake(ctx context.Context, cfg BenchIntakeConfig) (BenchIntakeResult, error) {
	var res BenchIntakeResult
	if cfg.Deliveries < 0 || cfg.Deliveries > BenchIntakeMaxDeliveries || cfg.Burst < 0 || cfg.Burst > BenchIntakeMaxDeliveries {
		return res, fmt.Errorf("deliveries and burst must be between 0 and %d", BenchIntakeMaxDeliveries)
	}
	if cfg.Concurrency < 1 || cfg.Concurrency > BenchIntakeMaxConcurrency {
		return res, fmt.Errorf("concurrency must be between 1 and %d", BenchIntakeMaxConcurrency)
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	assigned, err := loadBenchPayload(cfg.Fixtures, "issues", "assigned")
	if err != nil {
		return res, err
	}
	added, err := loadBenchPayload(cfg.Fixtures, "installation_repositories", "added")
	if err != nil {
		return res, err
	}

	url := cfg.DatabaseURL
	if url == "" {
		dir, err := os.MkdirTemp("", "testfirst-bench-intake-")
		if err != nil {
			return res, err
		}
		defer os.RemoveAll(dir)
		url = "sqlite://" + filepath.Join(dir, "testfirst.db")
	}
	d, err := db.Open(ctx, url)
	if err != nil {
		return res, err
	}
	defer d.Close()
	if err := d.Migrate(ctx); err != nil {
		return res, err
	}
	res.Engine = d.Engine()
	counter, err := openBenchCounter(ctx, d.Engine(), url)
	if err != nil {
		return res, err
	}
	defer counter.close()

	// The server, built as Serve builds it.
	intake := jobs.NewIntake(d)
	reg := prometheus.NewRegistry()
	mux := http.NewServeMux()
	handlers.RegisterService(mux, handlers.ServiceConfig{Ready: d.Ready, Registry: reg, Secrets: [][]byte{[]byte(benchSecret)}, Intake: intake, Log: cfg.Log})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return res, fmt.Errorf("listen on loopback: %w", err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), drainGrace)
		defer cancel()
		_ = srv.Shutdown(sctx)
		<-served
	}()
	endpoint := "http://" + ln.Addr().String() + handlers.WebhookPath
	client := &http.Client{
		Timeout: benchRequestTimeout,
		Transport: &http.Transport{
			Proxy:               nil,
			MaxIdleConns:        cfg.Concurrency,
			MaxIdleConnsPerHost: cfg.Concurrency,
			MaxConnsPerHost:     cfg.Concurrency,
			DisableCompression:  true,
		},
	}
	defer client.CloseIdleConnections()

	run := benchRunID()
	id := func(i int) string { return fmt.Sprintf("%s-%d", run, i) }
	payload := func(i int) benchPayload {
		if i%2 == 0 {
			return assigned
		}
		return added
	}

	// Deliveries over HTTP.
	res.Deliveries = cfg.Deliveries
	res.Latencies = make([]time.Duration, cfg.Deliveries)
	var next, failures atomic.Int64
	var firstErr firstError
	post := func(i int) (time.Duration, error) {
		p := payload(i)
		body, signature := p.numbered(id(i))
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
		if err != nil {
			return 0, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-GitHub-Event", p.event)
		req.Header.Set("X-GitHub-Delivery", id(i))
		req.Header.Set("X-Hub-Signature-256", signature)
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		took := time.Since(start)
		if resp.StatusCode != http.StatusAccepted {
			return took, fmt.Errorf("delivery %s: status %d", id(i), resp.StatusCode)
		}
		return took, nil
	}
	send := func(n int, record bool) {
		next.Store(0)
		var wg sync.WaitGroup
		for range cfg.Concurrency {
			wg.Go(func() {
				for {
					i := int(next.Add(1) - 1)
					if i >= n || ctx.Err() != nil {
						return
					}
					took, err := post(i)
					if err != nil {
						failures.Add(1)
						firstErr.set(err)
					}
					if record {
						res.Latencies[i] = took
					}
				}
			})
		}
		wg.Wait()
	}
	start := time.Now()
	send(cfg.Deliveries, true)
	res.Elapsed = time.Since(start)
	// Redeliver some: each must be answered 202 and change nothing.
	res.Redelivered = min(cfg.Deliveries, 100)
	send(res.Redelivered, false)
	res.Failures = int(failures.Load())
	if err := ctx.Err(); err != nil {
		return res, fmt.Errorf("bench intake: %w", err)
	}
	if e := firstErr.get(); e != nil {
		cfg.Log.WarnContext(ctx, "bench intake: delivery failed", "failures", res.Failures, "first", e)
	}
	for i := range cfg.Deliveries {
		res.WantRecorded++
		if payload(i).needsJob {
			res.WantJobs++
		}
	}

	// The burst: deliveries that each need a job, recorded through the same
	// intake, then drained by a no-op worker.
	res.Burst = cfg.Burst
	if cfg.Burst > 0 {
		start := time.Now()
		next.Store(0)
		var wg sync.WaitGroup
		var burstErr firstError
		for range cfg.Concurrency {
			wg.Go(func() {
				for {
					i := int(next.Add(1) - 1)
					if i >= cfg.Burst || ctx.Err() != nil {
						return
					}
					id := fmt.Sprintf("%s-burst-%d", run, i)
					body, _ := added.numbered(id)
					del := github.Delivery{ID: id, Event: added.event, Action: "added", Installation: 1, Handled: true, Payload: body}
					if dup, err := intake.Accept(ctx, del); err != nil || dup {
						burstErr.set(fmt.Errorf("burst delivery %s: duplicate %t, %v", del.ID, dup, err))
					}
				}
			})
		}
		wg.Wait()
		res.BurstInsert = time.Since(start)
		if e := burstErr.get(); e != nil {
			return res, e
		}
		if err := ctx.Err(); err != nil {
			return res, fmt.Errorf("bench intake: %w", err)
		}
		res.WantRecorded += int64(cfg.Burst)
		res.WantJobs += int64(cfg.Burst)
		if err := benchDrain(ctx, d, counter, run, &res); err != nil {
			return res, err
		}
	}

	if res.Recorded, err = counter.deliveries(ctx, run); err != nil {
		return res, err
	}
	if res.Jobs, err = counter.jobs(ctx, run, false); err != nil {
		return res, err
	}
	if cfg.Burst == 0 {
		// Nothing drained this run's jobs: remove them, or the next run on
		// the same database would work them off inside its drain time.
		if err := counter.deleteJobs(ctx, run); err != nil {
			return res, err
		}
	}
	return res, nil
}

// benchWorker works DeliveryArgs jobs by reading each one's payload as
// the delivery worker does and nothing more: the drain measures River and the
// payload read, not GitHub.
type benchWorker struct {
	river.WorkerDefaults[jobs.DeliveryArgs]
	db     *db.DB
	prefix string
	worked atomic.Int64
	failed firstError
}

func (w *benchWorker) Work(ctx context.Context, job *river.Job[jobs.DeliveryArgs]) error {
	if !strings.HasPrefix(job.Args.Delivery, w.prefix) {
		return nil
	}
	p, err := jobs.DeliveryPayload(ctx, w.db, job.Args)
	if err == nil && len(p) == 0 {
		err = fmt.Errorf("delivery %s: empty payload", job.Args.Delivery)
	}
	if err != nil {
		w.failed.set(err)
		return err
	}
	w.worked.Add(1)
	return nil
}

// benchDrain starts a River client configured as serve's (jobs.Queues,
// db.NewJobClient's fetch timing) with a no-op worker for the delivery kind
// and waits until every job of this run is completed.
func benchDrain(ctx context.Context, d *db.DB, counter *benchCounter, run string, res *BenchIntakeResult) error {
	w := &benchWorker{db: d, prefix: run}
	workers := river.NewWorkers()
	river.AddWorker(workers, w)
	client, err := d.NewJobClient(workers, jobs.Queues(d.Engine()),
		db.WithRiverConfig(func(c *river.Config) { c.Logger = slog.New(slog.DiscardHandler) }))
	if err != nil {
		return err
	}
	start := time.Now()
	if err := client.Start(ctx); err != nil {
		return fmt.Errorf("start bench workers: %w", err)
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), drainGrace)
		defer cancel()
		_ = client.Stop(sctx)
	}()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for w.worked.Load() < res.WantJobs {
		select {
		case <-ctx.Done():
			res.Drained = w.worked.Load()
			return fmt.Errorf("drain: %d of %d jobs worked: %w", res.Drained, res.WantJobs, ctx.Err())
		case <-tick.C:
		}
		if err := w.failed.get(); err != nil {
			res.Drained = w.worked.Load()
			return fmt.Errorf("drain: %d of %d jobs worked: %w", res.Drained, res.WantJobs, err)
		}
	}
	// Worked is not yet completed: River records completions in batches.
	for {
		left, err := counter.jobs(ctx, run, true)
		if err != nil {
			return err
		}
		if left == 0 {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("drain: %d jobs not completed: %w", left, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
	res.Drain = time.Since(start)
	res.Drained = w.worked.Load()
	return nil
}

// firstError keeps the first error set from any goroutine. (An
// atomic.Value would panic on a second error of another concrete type.)
type firstError struct{ p atomic.Pointer[error] }

func (f *firstError) set(err error) { f.p.CompareAndSwap(nil, &err) }

func (f *firstError) get() error {
	if p := f.p.Load(); p != nil {
		return *p
	}
	return nil
}

// benchRunID names this run's deliveries so counts ignore earlier rows.
func benchRunID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return "bench-" + hex.EncodeToString(b)
}

// benchCounter counts a run's rows over a connection of its own: the app's
// database API has no counting queries, and on SQLite a second reader never
// blocks the writer (WAL).
type benchCounter struct {
	sqlite *sql.DB
	pg     *pgx.Conn
}

func openBenchCounter(ctx context.Context, eng db.Engine, url string) (*benchCounter, error) {
	switch eng {
	case db.SQLite:
		_, rest, _ := strings.Cut(url, "://")
		path, _, _ := strings.Cut(rest, "?")
		c, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
		if err != nil {
			return nil, fmt.Errorf("open counting connection: %w", err)
		}
		c.SetMaxOpenConns(1)
		return &benchCounter{sqlite: c}, nil
	case db.Postgres:
		c, err := pgx.Connect(ctx, url)
		if err != nil {
			return nil, fmt.Errorf("open counting connection: %w", err)
		}
		return &benchCounter{pg: c}, nil
	}
	return nil, fmt.Errorf("bench intake: unknown engine %q", eng)
}

func (c *benchCounter) close() {
	if c.sqlite != nil {
		_ = c.sqlite.Close()
	}
	if c.pg != nil {
		_ = c.pg.Close(context.Background())
	}
}

func (c *benchCounter) count(ctx context.Context, query string, args ...any) (int64, error) {
	var n int64
	var err error
	if c.sqlite != nil {
		err = c.sqlite.QueryRowContext(ctx, query, args...).Scan(&n)
	} else {
		err = c.pg.QueryRow(ctx, query, args...).Scan(&n)
	}
	if err != nil {
		return 0, fmt.Errorf("count bench rows: %w", err)
	}
	return n, nil
}

// deliveries counts this run's rows in the deliveries table.
func (c *benchCounter) deliveries(ctx context.Context, run string) (int64, error) {
	return c.count(ctx, "SELECT count(*) FROM deliveries WHERE id LIKE $1", run+"-%")
}

// deleteJobs removes this run's delivery jobs.
func (c *benchCounter) deleteJobs(ctx context.Context, run string) error {
	arg := "args->>'delivery'"
	if c.sqlite != nil {
		arg = "json_extract(args, '$.delivery')"
	}
	q := "DELETE FROM river_job WHERE kind = $1 AND " + arg + " LIKE $2"
	var err error
	if c.sqlite != nil {
		_, err = c.sqlite.ExecContext(ctx, q, jobs.DeliveryArgs{}.Kind(), run+"-%")
	} else {
		_, err = c.pg.Exec(ctx, q, jobs.DeliveryArgs{}.Kind(), run+"-%")
	}
	if err != nil {
		return fmt.Errorf("delete bench jobs: %w", err)
	}
	return nil
}

// jobs counts this run's delivery jobs; unfinished only when pending.
func (c *benchCounter) jobs(ctx context.Context, run string, unfinished bool) (int64, error) {
	arg := "args->>'delivery'"
	if c.sqlite != nil {
		arg = "json_extract(args, '$.delivery')"
	}
	q := "SELECT count(*) FROM river_job WHERE kind = $1 AND " + arg + " LIKE $2"
	if unfinished {
		q += " AND state <> 'completed'"
	}
	return c.count(ctx, q, jobs.DeliveryArgs{}.Kind(), run+"-%")
}

// drainGrace bounds how long the benchmark waits for its server and job
// workers to stop, as serve does.
const drainGrace = 15 * time.Second
