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
// cfg.Listen. listening, when set, receives the bound address.
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
		workers := river.NewWorkers()
		delivery := &DeliveryWorker{db: d, github: clients, log: log}
		gw, versions, closeGrading, err := openGradeWorker(ctx, cfg, d, clients, log)
		if err != nil {
			log.WarnContext(ctx, "pull requests will not be graded", "err", err)
		} else {
			defer closeGrading()
			delivery.store = versions
			river.AddWorker(workers, gw)
		}
		river.AddWorker(workers, delivery)
		river.AddWorker(workers, NewRedeliverWorker(d, clients, log))
		jobs, err = d.NewJobClient(workers, jobQueues(d.Engine()),
			db.WithRiverConfig(func(c *river.Config) {
				c.PeriodicJobs = append(c.PeriodicJobs, RedeliverPeriodicJob(DefaultRedeliverInterval))
			}))
		if err != nil {
			return err
		}
		if err := jobs.Start(ctx); err != nil {
			return fmt.Errorf("start job workers: %w", err)
		}
	} else {
		log.WarnContext(ctx, "no GitHub App configured: deliveries are refused and no jobs run; set TESTFIRST_GITHUB_APP_ID, TESTFIRST_GITHUB_PRIVATE_KEY_FILE and TESTFIRST_WEBHOOK_SECRET_FILE")
		mux.Handle("GET /{$}", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			fmt.Fprintln(w, "testfirst is running without a GitHub App.\nSet TESTFIRST_GITHUB_APP_ID, TESTFIRST_GITHUB_PRIVATE_KEY_FILE and TESTFIRST_WEBHOOK_SECRET_FILE, then restart.")
		}))
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

	select {
	case err := <-serveErr:
		return fmt.Errorf("serve HTTP: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	err = srv.Shutdown(sctx)
	if jobs != nil {
		err = errors.Join(err, jobs.Stop(sctx))
	}
	log.InfoContext(sctx, "stopped")
	return err
}

// openGradeWorker connects the store (both sides) and the sandbox engine.
func openGradeWorker(ctx context.Context, cfg Config, d *db.DB, clients *github.Clients, log *slog.Logger) (*GradeWorker, approvedVersions, func(), error) {
	w, closeW, err := OpenStoreWriter(ctx, cfg.StoreURL)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("hidden test store: %w", err)
	}
	r, closeR, err := OpenStoreReader(ctx, cfg.StoreURL)
	if err != nil {
		closeW()
		return nil, nil, nil, fmt.Errorf("hidden test store: %w", err)
	}
	g, err := OpenGrading(ctx, GradingConfig{Progress: io.Discard})
	if err != nil {
		closeW()
		closeR()
		return nil, nil, nil, fmt.Errorf("sealed grader: %w", err)
	}
	gw := &GradeWorker{db: d, github: clients, reader: r, grader: g.Grader, publicURL: cfg.PublicURL, log: log}
	return gw, w, func() { closeW(); closeR() }, nil
}
