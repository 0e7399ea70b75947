package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/testfirst-app/testfirst/grader"
	"github.com/testfirst-app/testfirst/store"
)

// NewAppSetup builds the workers of the app role: deliveries, tickets,
// pull requests, commands, redelivery sweeps and the store sync, on the
// default queue. It holds only the store's web side (w, which seals for
// the grader and never opens a sealed test): grades and base checks are
// enqueued on QueueSandbox, which a grader role's service works
// (NewGraderSetup), never this one.
func NewAppSetup(cfg Config, w *store.Writer) Setup {
	q := &gradeQueue{db: cfg.DB, store: w, publicURL: cfg.PublicURL, log: cfg.Log}
	set := newSetup(cfg, q, nil, newPastedScanner(cfg.DB, w, cfg.GitHub, cfg.Log))
	river.AddWorker(set.Workers, &SyncWorker{db: cfg.DB, github: cfg.GitHub, store: w, grades: q, publicURL: cfg.PublicURL, log: cfg.Log})
	river.AddWorker(set.Workers, &KeepTestsWorker{db: cfg.DB, github: cfg.GitHub, store: w, log: cfg.Log, requireUIDSplit: cfg.RequireUIDSplit})
	timeout := SandboxJobTimeout(cfg.RescueAfter)
	river.AddWorker(set.Workers, &workedElsewhere[GradeArgs]{role: "grader", timeout: timeout})
	river.AddWorker(set.Workers, &workedElsewhere[VersionCheckArgs]{role: "grader", timeout: timeout})
	river.AddWorker(set.Workers, &workedElsewhere[RegressionsArgs]{role: "grader", timeout: timeout})
	set.Periodic = append(set.Periodic, SyncPeriodicJob(syncInterval(cfg)))
	return set
}

// NewGraderSetup builds the workers of the grader role: the grades, base
// checks and regression runs on QueueSandbox, and no other queue. It holds the store's
// grader side (r) and the sandbox (g), and no store writer: what it
// tells GitHub is the check runs of its grades.
//
// The app role's periodic jobs (redelivery sweeps, store syncs) and job
// kinds are declared here too, because River elects one leader among all
// the services on a database: the leader enqueues the periodic jobs it
// was given, and its rescuer retries a stuck job only of a kind it knows
// (it discards any other). A grader that leads thus keeps the app's
// schedule and rescues the app's lost jobs for the app to run again.
func NewGraderSetup(cfg Config, r *store.Reader, g *grader.Grader, sb Sandboxes) Setup {
	q := &gradeQueue{db: cfg.DB, publicURL: cfg.PublicURL, log: cfg.Log}
	workers := river.NewWorkers()
	river.AddWorker(workers, &GradeWorker{db: cfg.DB, github: cfg.GitHub, reader: r, grader: g, sandboxes: sb, grades: q,
		metrics: cfg.Metrics, log: cfg.Log, rescueAfter: cfg.RescueAfter, requireUIDSplit: cfg.RequireUIDSplit, split: cfg.Split})
	river.AddWorker(workers, &VersionCheckWorker{db: cfg.DB, github: cfg.GitHub, store: r, grader: g, sandboxes: sb,
		metrics: cfg.Metrics, log: cfg.Log, rescueAfter: cfg.RescueAfter})
	river.AddWorker(workers, &RegressionsWorker{db: cfg.DB, github: cfg.GitHub, grader: g, sandboxes: sb, grades: q,
		metrics: cfg.Metrics, log: cfg.Log, rescueAfter: cfg.RescueAfter})
	river.AddWorker(workers, &workedElsewhere[DeliveryArgs]{role: "app"})
	river.AddWorker(workers, &workedElsewhere[RedeliverArgs]{role: "app"})
	river.AddWorker(workers, &workedElsewhere[SyncArgs]{role: "app"})
	river.AddWorker(workers, &workedElsewhere[KeepTestsArgs]{role: "app"})
	set := Setup{Workers: workers,
		Queues:   map[string]river.QueueConfig{QueueSandbox: {MaxWorkers: sandboxWorkers(cfg.DB.Engine())}},
		Periodic: []*river.PeriodicJob{RedeliverPeriodicJob(DefaultRedeliverInterval), SyncPeriodicJob(syncInterval(cfg))}}
	if sb != nil {
		set.Sweeper = NewSandboxSweeper(sb, cfg.SandboxSweepInterval, cfg.Metrics, cfg.Log)
		cfg.Metrics.countSandboxes(sb)
	}
	return set
}

func syncInterval(cfg Config) time.Duration {
	if cfg.SyncInterval <= 0 {
		return DefaultSyncInterval
	}
	return cfg.SyncInterval
}

// workedElsewhere declares a job kind that another role's service works:
// this service never fetches its queue, and knows the kind only so that
// River's rescuer, when this service leads, gives a stuck job of it
// another attempt (with its own timeout) instead of discarding it.
type workedElsewhere[T river.JobArgs] struct {
	river.WorkerDefaults[T]
	role    string
	timeout time.Duration
}

// Timeout implements river.Worker: the kind's own timeout where it has
// one, so a job is not rescued while it still runs on the other role.
func (w *workedElsewhere[T]) Timeout(job *river.Job[T]) time.Duration {
	if w.timeout > 0 {
		return w.timeout
	}
	return w.WorkerDefaults.Timeout(job)
}

// Work implements river.Worker. It runs only if a queue of the other role
// was configured on this service by mistake: the job then fails, and is
// retried, saying so.
func (w *workedElsewhere[T]) Work(_ context.Context, job *river.Job[T]) error {
	return fmt.Errorf("job %s (%s) is the %s role's: this service's queues are misconfigured", job.Kind, job.Queue, w.role)
}
