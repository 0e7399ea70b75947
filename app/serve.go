package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/riverqueue/river"

	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/handlers"
	"github.com/testfirst-app/testfirst/jobs"
	"github.com/testfirst-app/testfirst/sandbox/egress"
)

// shutdownGrace bounds how long serve waits for requests and jobs in
// flight when it stops.
const shutdownGrace = 15 * time.Second

// The intake is what the webhook handler records deliveries with.
var _ handlers.Intake = (*jobs.Intake)(nil)

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
	// Why this replica does not grade, once its jobs are set up.
	var gradingOff atomic.Pointer[error]
	degraded := func() error {
		if p := gradingOff.Load(); p != nil {
			return *p
		}
		return nil
	}
	handlers.RegisterService(mux, handlers.ServiceConfig{Ready: d.Ready, Degraded: degraded, Registry: reg, Secrets: cfg.WebhookSecrets,
		Intake: jobs.NewIntake(d), Log: log})

	if !cfg.HasApp() {
		registered, err := mountSetup(ctx, mux, cfg, log)
		if err != nil {
			return err
		}
		return serveHTTP(ctx, cfg, mux, log, listening, registered, nil)
	}
	stop, err := startApp(ctx, cfg, d, mux, reg, log, &gradingOff)
	if err != nil {
		return err
	}
	if cfg.WebhookProxyURL != "" {
		// Deliveries from the channel go through the same intake as
		// GitHub's own; the forwarder ends with Serve.
		pctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); forwardWebhooks(pctx, cfg.WebhookProxyURL, mux, log) }()
		defer func() { cancel(); <-done }()
	}
	return serveHTTP(ctx, cfg, mux, log, listening, nil, stop)
}

// startApp proves the app's credentials, opens the hidden-test store once
// for the card and the workers, mounts the card and starts the job
// workers. The returned function stops the workers and closes the store.
func startApp(ctx context.Context, cfg Config, d *db.DB, mux *http.ServeMux, reg prometheus.Registerer, log *slog.Logger, gradingOff *atomic.Pointer[error]) (func(context.Context) error, error) {
	clients, err := github.NewClients(github.AppConfig{AppID: cfg.GitHubAppID, PrivateKey: cfg.PrivateKey, BaseURL: cfg.GitHubAPIURL,
		Metrics: github.NewMetrics(reg)})
	if err != nil {
		return nil, err
	}
	app, err := clients.App(ctx)
	if err != nil {
		return nil, fmt.Errorf("prove the GitHub App's credentials (GET /app): %w: check TESTFIRST_GITHUB_APP_ID and the key in TESTFIRST_GITHUB_PRIVATE_KEY_FILE", err)
	}
	log.InfoContext(ctx, "github app", "app", app.Slug, "id", app.ID)

	// The store's keys are needed by the card and by grading; without
	// them the service still takes deliveries.
	st, storeErr := openServiceStore(ctx, cfg.StoreURL)
	closeStore := func() {}
	if storeErr == nil {
		closeStore = func() { st.close() }
	}
	if err := mountCardOrHome(ctx, mux, cfg, d, clients, st, storeErr, reg, log, app); err != nil {
		closeStore()
		return nil, err
	}

	metrics := jobs.NewMetrics(reg, d)
	jcfg := jobs.Config{DB: d, GitHub: clients, PublicURL: cfg.PublicURL, Log: log, Metrics: metrics,
		RescueAfter: cfg.JobRescueAfter, SyncInterval: cfg.SyncInterval}
	setup, closeGrading, err := jobsSetup(ctx, jcfg, cfg, st, storeErr, log, gradingOff)
	if err != nil {
		closeStore()
		return nil, err
	}
	if closeGrading != nil {
		prevClose := closeStore
		closeStore = func() { closeGrading(); prevClose() }
	}
	client, err := d.NewJobClient(setup.Workers, setup.Queues, db.WithRiverConfig(func(c *river.Config) {
		c.PeriodicJobs = append(c.PeriodicJobs, setup.Periodic...)
		c.RescueStuckJobsAfter = cfg.JobRescueAfter
		// River's default for jobs without their own timeout, kept below
		// the rescue so a slow job is not taken for lost.
		c.JobTimeout = min(time.Minute, cfg.JobRescueAfter/2)
	}))
	if err != nil {
		closeStore()
		return nil, err
	}
	events, stopEvents := client.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed, river.EventKindJobCancelled)
	go metrics.Observe(events)
	if err := client.Start(ctx); err != nil {
		stopEvents()
		closeStore()
		return nil, fmt.Errorf("start job workers: %w", err)
	}
	return func(ctx context.Context) error {
		err := client.Stop(ctx)
		stopEvents()
		closeStore()
		return err
	}, nil
}

// jobsSetup decides, once, whether this replica grades: with the store's
// both sides and the sealed grader it does; without, pull requests are not
// graded, their check runs and /readyz say why (stored in off), and the
// rest of the pipeline runs.
//
// Grades run in the dependency environment of their base, built from
// the service's package index through the egress proxies; the returned
// function stops them.
func jobsSetup(ctx context.Context, cfg jobs.Config, svc Config, st *serviceStore, storeErr error, log *slog.Logger, off *atomic.Pointer[error]) (jobs.Setup, func(), error) {
	if storeErr == nil && st.readerErr != nil {
		storeErr = st.readerErr
	}
	notGrading := func(why error) jobs.Setup {
		log.WarnContext(ctx, "pull requests will not be graded", "err", why)
		why = fmt.Errorf("pull requests are not graded: %w", why)
		off.Store(&why)
		cfg.GradingOff = why
		return jobs.NewSetup(cfg)
	}
	if storeErr != nil {
		return notGrading(storeErr), nil, nil
	}
	g, err := OpenGrading(ctx, GradingConfig{Progress: io.Discard, Environments: true, PackageIndex: svc.PackageIndex, EgressDir: svc.EgressDir,
		EgressLog: func(e egress.Entry) {
			log.InfoContext(ctx, "egress", "host", e.Host, "method", e.Method, "path", e.Path, "status", e.Status, "bytes", e.Bytes, "denied", e.Denied)
		}})
	if err != nil {
		return notGrading(fmt.Errorf("sealed grader: %w", err)), nil, nil
	}
	closeGrading := func() {
		if err := g.Close(); err != nil {
			log.WarnContext(ctx, "stop egress proxies", "err", err)
		}
	}
	// A replica that crashed left its sandboxes behind; those past their
	// deadline go now.
	if n, err := g.Docker.Sweep(ctx, time.Now()); err != nil {
		log.WarnContext(ctx, "sandbox sweep failed", "err", err)
	} else if n > 0 {
		log.InfoContext(ctx, "sandbox sweep", "removed", n)
	}
	return jobs.NewGradingSetup(cfg, jobs.Sealed{Writer: st.writer, Reader: st.reader, Grader: g.Grader}), closeGrading, nil
}

// serveHTTP answers HTTP on cfg.Listen until ctx ends, the server fails,
// or registered closes (then it returns ErrConfigured); stop, when set,
// stops what startApp started.
func serveHTTP(ctx context.Context, cfg Config, mux *http.ServeMux, log *slog.Logger, listening func(string), registered <-chan struct{}, stop func(context.Context) error) error {
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		if stop != nil {
			err = errors.Join(err, stop(context.WithoutCancel(ctx)))
		}
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
		if stop != nil {
			err = errors.Join(err, stop(context.WithoutCancel(ctx)))
		}
		return fmt.Errorf("serve HTTP: %w", err)
	case <-ctx.Done():
	case <-registered:
		configured = true
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	err = srv.Shutdown(sctx)
	if stop != nil {
		err = errors.Join(err, stop(sctx))
	}
	log.InfoContext(sctx, "stopped")
	if configured && err == nil {
		return ErrConfigured
	}
	return err
}
