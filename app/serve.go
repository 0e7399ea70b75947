package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/riverqueue/river"

	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/handlers"
	"github.com/testfirst-app/testfirst/jobs"
	"github.com/testfirst-app/testfirst/store"
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
//
// cfg.Role splits the service: RoleApp does all but grading, RoleGrader
// only grades (see the constants); each refuses to start, saying why, when
// it lacks what it needs or holds what it must not.
func Serve(ctx context.Context, cfg Config, log *slog.Logger, listening func(addr string)) error {
	if err := checkRole(cfg, os.Getenv); err != nil {
		return err
	}
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
	if cfg.Role == RoleGrader {
		handlers.RegisterProbes(mux, handlers.ServiceConfig{Ready: d.Ready, Registry: reg, Log: log, OperatorToken: cfg.OperatorToken})
		stop, err := startGrader(ctx, cfg, d, reg, log)
		if err != nil {
			return err
		}
		return serveHTTP(ctx, cfg, mux, log, listening, nil, stop)
	}
	ready := d.Ready
	if !cfg.HasApp() {
		// The registration page answers, but no delivery can be taken.
		ready = func(context.Context) error {
			return fmt.Errorf("no GitHub App is configured: open %s/ to register one", strings.TrimSuffix(cfg.PublicURL, "/"))
		}
	}
	handlers.RegisterService(mux, handlers.ServiceConfig{Ready: ready, Degraded: degraded, Registry: reg, Secrets: cfg.WebhookSecrets,
		Intake: jobs.NewIntake(d), Log: log, OperatorToken: cfg.OperatorToken})

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
	st, storeErr := openStoreSides(ctx, cfg.StoreURL, cfg.Role != RoleApp)
	if storeErr != nil && cfg.Role == RoleApp {
		return nil, fmt.Errorf("role app: %w", storeErr)
	}
	closeStore := func() {}
	if storeErr == nil {
		closeStore = func() { st.close() }
		// tests push refuses a store no service reads: this one is read.
		// A store that does not answer now is told again until it does.
		go markServed(ctx, st.blobs, cfg.PublicURL, log)
	}
	if err := mountCardOrHome(ctx, mux, cfg, d, clients, st, storeErr, reg, log, app); err != nil {
		closeStore()
		return nil, err
	}

	metrics := jobs.NewMetrics(reg, d)
	jcfg := jobsConfig(cfg, d, clients, log, metrics)
	var setup jobs.Setup
	var closeGrading func()
	if cfg.Role == RoleApp {
		setup = jobs.NewAppSetup(jcfg, st.writer)
	} else if setup, closeGrading, err = jobsSetup(ctx, jcfg, cfg, st, storeErr, log, gradingOff); err != nil {
		closeStore()
		return nil, err
	}
	if closeGrading != nil {
		prevClose := closeStore
		closeStore = func() { closeGrading(); prevClose() }
	}
	return startJobs(ctx, cfg, d, setup, metrics, closeStore)
}

// startJobs starts the job workers of setup; the returned function stops
// them and then calls closeFn (which startJobs also calls when it fails).
func startJobs(ctx context.Context, cfg Config, d *db.DB, setup jobs.Setup, metrics *jobs.Metrics, closeFn func()) (func(context.Context) error, error) {
	client, err := d.NewJobClient(setup.Workers, setup.Queues, db.WithRiverConfig(func(c *river.Config) {
		c.PeriodicJobs = append(c.PeriodicJobs, setup.Periodic...)
		c.RescueStuckJobsAfter = cfg.JobRescueAfter
		// River's default for jobs without their own timeout, kept below
		// the rescue so a slow job is not taken for lost.
		c.JobTimeout = min(time.Minute, cfg.JobRescueAfter/2)
	}))
	if err != nil {
		closeFn()
		return nil, err
	}
	events, stopEvents := client.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed, river.EventKindJobCancelled)
	go metrics.Observe(events)
	if err := client.Start(ctx); err != nil {
		stopEvents()
		closeFn()
		return nil, fmt.Errorf("start job workers: %w", err)
	}
	stopSweeper := startSweeper(ctx, setup.Sweeper)
	return func(ctx context.Context) error {
		err := client.Stop(ctx)
		stopSweeper()
		stopEvents()
		closeFn()
		return err
	}, nil
}

// startSweeper runs the sweep of this replica's leftover sandboxes (none
// on a replica that does not grade) until the returned function stops it
// and waits for its end.
func startSweeper(ctx context.Context, s *jobs.SandboxSweeper) func() {
	if s == nil {
		return func() {}
	}
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); s.Run(sctx) }()
	return func() { cancel(); <-done }
}

// checkRole is the start-up check of the split roles that the
// configuration alone cannot make: the app role refuses the grader's
// identity, the grader role needs the app's credentials.
func checkRole(cfg Config, getenv func(string) string) error {
	if cfg.Role != RoleAll && len(cfg.Agents.Harnesses) > 0 {
		return fmt.Errorf("role %s: harnesses are configured, and agents run only in role all: a writer's results go into the store through the app's create-only side while it runs in a sandbox on the grader's engine; serve with --role all, or drop model_apis, harnesses and agents", cfg.Role)
	}
	switch cfg.Role {
	case RoleApp:
		return refuseGraderIdentity(getenv)
	case RoleGrader:
		if !cfg.HasApp() {
			return errors.New("role grader: no GitHub App configured: the grader fetches trees and completes check runs as the app; set TESTFIRST_GITHUB_APP_ID and TESTFIRST_GITHUB_PRIVATE_KEY_FILE (register the app from the app role's setup page first)")
		}
	}
	return nil
}

// startGrader starts the grader role: it proves the app's credentials,
// opens the store's grader side and the sealed grader, and works the
// grades and base checks. It refuses to start without any of them.
func startGrader(ctx context.Context, cfg Config, d *db.DB, reg prometheus.Registerer, log *slog.Logger) (func(context.Context) error, error) {
	clients, err := github.NewClients(github.AppConfig{AppID: cfg.GitHubAppID, PrivateKey: cfg.PrivateKey, BaseURL: cfg.GitHubAPIURL})
	if err != nil {
		return nil, err
	}
	app, err := clients.App(ctx)
	if err != nil {
		return nil, fmt.Errorf("role grader: prove the GitHub App's credentials (GET /app): %w: check TESTFIRST_GITHUB_APP_ID and the key in TESTFIRST_GITHUB_PRIVATE_KEY_FILE", err)
	}
	log.InfoContext(ctx, "github app", "app", app.Slug, "id", app.ID, "role", cfg.Role)
	r, closeStore, err := openGraderStore(ctx, cfg.StoreURL)
	if err != nil {
		return nil, err
	}
	g, err := openSealedGrading(ctx, cfg, log)
	if err != nil {
		closeStore()
		return nil, fmt.Errorf("role grader: sealed grader: %w", err)
	}
	closeAll := func() {
		g.Close()
		closeStore()
	}
	metrics := jobs.NewMetrics(reg, d)
	jcfg := jobsConfig(cfg, d, clients, log, metrics)
	return startJobs(ctx, cfg, d, jobs.NewGraderSetup(jcfg, r, g.Grader, g.Sandboxes), metrics, closeAll)
}

// jobsConfig is what the jobs of every role are configured with.
func jobsConfig(cfg Config, d *db.DB, clients *github.Clients, log *slog.Logger, metrics *jobs.Metrics) jobs.Config {
	return jobs.Config{DB: d, GitHub: clients, PublicURL: cfg.PublicURL, Log: log, Metrics: metrics,
		RescueAfter: cfg.JobRescueAfter, SyncInterval: cfg.SyncInterval, SandboxSweepInterval: cfg.SandboxSweepInterval,
		RequireUIDSplit: cfg.UIDSplit == "required", Split: cfg.Split == "on"}
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
	g, err := openSealedGrading(ctx, svc, log)
	if err != nil {
		return notGrading(fmt.Errorf("sealed grader: %w", err)), nil, nil
	}
	// The agents run beside the grades, on the same Docker engine.
	if len(svc.Agents.Harnesses) > 0 && g.Docker == nil {
		g.Close()
		return jobs.Setup{}, nil, errors.New("harnesses are configured but sandbox.provider is kubernetes: agents run on the Docker provider only; drop model_apis, harnesses and agents, or grade on docker")
	}
	sandboxes, closeAll := g.Sandboxes, g.Close
	if g.Docker != nil {
		agents, onE2B, stopE2B, err := openAgents(ctx, svc, g.Docker, log)
		if err != nil {
			g.Close()
			return jobs.Setup{}, nil, err
		}
		cfg.Agents = agents
		if onE2B != nil {
			sandboxes = bothSandboxes{grading: g.Sandboxes, e2b: onE2B}
			closeAll = func() { stopE2B(); g.Close() }
		}
	}
	// The sandboxes a crash left behind go once past their deadline: the
	// setup's sweeper looks at once and then periodically.
	return jobs.NewGradingSetup(cfg, jobs.Sealed{Writer: st.writer, Reader: st.reader, Grader: g.Grader, Sandboxes: sandboxes}), closeAll, nil
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

// markServedRetry is how long markServed waits between tries.
const markServedRetry = 30 * time.Second

// markServed records in the store that this service reads it
// (store.MarkServed), trying again every markServedRetry until the store
// answers or ctx ends; each failure is logged.
func markServed(ctx context.Context, blobs store.Blobs, publicURL string, log *slog.Logger) {
	for {
		err := store.MarkServed(ctx, blobs, publicURL, time.Now())
		if err == nil || ctx.Err() != nil {
			return
		}
		log.WarnContext(ctx, "hidden test store: record that this service reads it; trying again", "in", markServedRetry, "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(markServedRetry):
		}
	}
}
