package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/riverqueue/river"

	"github.com/testfirst-app/testfirst/app/db"
	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/handlers"
)

// shutdownGrace bounds how long serve waits for requests and jobs in
// flight when it stops.
const shutdownGrace = 15 * time.Second

// Migrate opens the database cfg names and applies every migration.
func Migrate(ctx context.Context, cfg Config) error {
	d, err := db.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Migrate(ctx)
}

// Serve runs the service until ctx ends: it migrates the database, proves
// the app's credentials, starts the job workers and answers HTTP on
// cfg.Listen. listening, when set, receives the bound address. Without app
// credentials it serves the app's registration instead, and returns
// ErrConfigured once they are stored.
func Serve(ctx context.Context, cfg Config, log *slog.Logger, listening func(addr string)) error {
	d, err := db.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Migrate(ctx); err != nil {
		return err
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	mux := http.NewServeMux()
	mux.Handle("GET /healthz", handlers.Health())
	mux.Handle("GET /readyz", handlers.Ready(d.Ready))
	mux.Handle("GET /metrics", handlers.MetricsHandler(reg))
	mux.Handle("/webhook", handlers.NewWebhook(cfg.WebhookSecrets, NewIntake(d), handlers.NewMetrics(reg), log))

	var jobs *db.JobClient
	var registered <-chan struct{} // closed when setup stored credentials
	if cfg.HasApp() {
		clients, err := github.NewClients(github.AppConfig{AppID: cfg.GitHubAppID, PrivateKey: cfg.PrivateKey, BaseURL: cfg.GitHubAPIURL})
		if err != nil {
			return err
		}
		app, err := clients.App(ctx)
		if err != nil {
			return fmt.Errorf("prove the GitHub App's credentials (GET /app): %w: check TESTFIRST_GITHUB_APP_ID and the key in TESTFIRST_GITHUB_PRIVATE_KEY_FILE", err)
		}
		log.InfoContext(ctx, "github app", "app", app.Slug, "id", app.ID)
		if cfg.HasLogin() {
			// A decision on the card is announced, labelled and acted on
			// by the ticket's sync, at once rather than at the next tick.
			sync := func(ctx context.Context, ticket int64) error {
				return d.Tx(ctx, func(tx *db.Tx) error { return tx.InsertJob(ctx, SyncArgs{Ticket: ticket}, nil) })
			}
			closeCard, err := mountCard(ctx, mux, cfg, d, clients, reg, log, sync)
			var noStore *cardStoreError
			switch {
			case errors.As(err, &noStore):
				// Like grading, the card needs the store's keys; without
				// them the service still takes deliveries.
				mux.Handle("GET /{$}", handlers.Installed(app))
				log.WarnContext(ctx, "the approval card is off", "err", err)
			case err != nil:
				return err
			default:
				defer closeCard()
			}
		} else {
			mux.Handle("GET /{$}", handlers.Installed(app))
			log.WarnContext(ctx, "no OAuth client: the approval card is off; set TESTFIRST_GITHUB_CLIENT_ID and TESTFIRST_GITHUB_CLIENT_SECRET_FILE")
		}
		workers := river.NewWorkers()
		metrics := newPipelineMetrics(reg, d)
		grades := &gradeQueue{db: d, publicURL: cfg.PublicURL, log: log}
		delivery := &DeliveryWorker{db: d, github: clients, grades: grades, log: log}
		queues := jobQueues(d.Engine())
		var periodic []*river.PeriodicJob
		sandboxed, closeGrading, err := openSandboxWorkers(ctx, cfg, d, clients, grades, metrics, log)
		if err != nil {
			log.WarnContext(ctx, "pull requests will not be graded", "err", err)
		} else {
			defer closeGrading()
			river.AddWorker(workers, sandboxed.grade)
			river.AddWorker(workers, sandboxed.check)
			river.AddWorker(workers, sandboxed.sync)
			queues[QueueSandbox] = river.QueueConfig{MaxWorkers: sandboxWorkers(d)}
			periodic = append(periodic, SyncPeriodicJob(cfg.SyncInterval))
		}
		river.AddWorker(workers, delivery)
		river.AddWorker(workers, NewRedeliverWorker(d, clients, log))
		periodic = append(periodic, RedeliverPeriodicJob(DefaultRedeliverInterval))
		jobs, err = d.NewJobClient(workers, queues, db.WithRiverConfig(func(c *river.Config) {
			c.PeriodicJobs = append(c.PeriodicJobs, periodic...)
			c.RescueStuckJobsAfter = cfg.JobRescueAfter
			// River's default for jobs without their own timeout, kept
			// below the rescue so a slow job is not taken for lost.
			c.JobTimeout = min(time.Minute, cfg.JobRescueAfter/2)
		}))
		if err != nil {
			return err
		}
		events, stopEvents := jobs.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed, river.EventKindJobCancelled)
		defer stopEvents()
		go metrics.observe(events)
		if err := jobs.Start(ctx); err != nil {
			return fmt.Errorf("start job workers: %w", err)
		}
	} else if registered, err = mountSetup(ctx, mux, cfg, log); err != nil {
		return err
	}

	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w: choose another TESTFIRST_LISTEN", cfg.Listen, err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute}
	log.InfoContext(ctx, "listening", "addr", ln.Addr().String(), "public_url", cfg.PublicURL)
	if listening != nil {
		listening(ln.Addr().String())
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()

	configured := false
	select {
	case err := <-serveErr:
		return fmt.Errorf("serve HTTP: %w", err)
	case <-ctx.Done():
	case <-registered:
		configured = true
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	err = srv.Shutdown(sctx)
	if jobs != nil {
		err = errors.Join(err, jobs.Stop(sctx))
	}
	log.InfoContext(sctx, "stopped")
	if configured && err == nil {
		return ErrConfigured
	}
	return err
}

// sandboxWorkers is how many grades and base checks run at once on this
// replica: each takes a sandbox with its CPU and memory limits.
func sandboxWorkers(d *db.DB) int {
	if d.Engine() == db.SQLite {
		return 1
	}
	return 2
}

// sandboxWorkerSet is the workers that need the store and the sandbox.
type sandboxWorkerSet struct {
	grade *GradeWorker
	check *VersionCheckWorker
	sync  *SyncWorker
}

// openSandboxWorkers connects the store (both sides) and the sandbox
// engine, and gives grades the store.
func openSandboxWorkers(ctx context.Context, cfg Config, d *db.DB, clients *github.Clients, grades *gradeQueue, metrics *pipelineMetrics, log *slog.Logger) (sandboxWorkerSet, func(), error) {
	w, closeW, err := OpenStoreWriter(ctx, cfg.StoreURL)
	if err != nil {
		return sandboxWorkerSet{}, nil, fmt.Errorf("hidden test store: %w", err)
	}
	r, closeR, err := OpenStoreReader(ctx, cfg.StoreURL)
	if err != nil {
		closeW()
		return sandboxWorkerSet{}, nil, fmt.Errorf("hidden test store: %w", err)
	}
	g, err := OpenGrading(ctx, GradingConfig{Progress: io.Discard})
	if err != nil {
		closeW()
		closeR()
		return sandboxWorkerSet{}, nil, fmt.Errorf("sealed grader: %w", err)
	}
	// A replica that crashed left its sandboxes behind; those past their
	// deadline go now.
	if n, err := g.Docker.Sweep(ctx, time.Now()); err != nil {
		log.WarnContext(ctx, "sandbox sweep failed", "err", err)
	} else if n > 0 {
		log.InfoContext(ctx, "sandbox sweep", "removed", n)
	}
	grades.store = w
	set := sandboxWorkerSet{
		grade: &GradeWorker{db: d, github: clients, reader: r, grader: g.Grader, grades: grades, metrics: metrics, log: log, rescueAfter: cfg.JobRescueAfter},
		check: &VersionCheckWorker{db: d, github: clients, store: r, grader: g.Grader, log: log, rescueAfter: cfg.JobRescueAfter},
		sync:  &SyncWorker{db: d, github: clients, store: w, grades: grades, publicURL: cfg.PublicURL, log: log},
	}
	return set, func() { closeW(); closeR() }, nil
}
