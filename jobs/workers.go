package jobs

import (
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/grader"
	"github.com/testfirst-app/testfirst/store"
)

// Config is what the pipeline's workers are built from.
type Config struct {
	DB     *db.DB
	GitHub *github.Clients
	// PublicURL is where users reach the service: the card's and grade
	// pages' links start with it.
	PublicURL string
	Log       *slog.Logger
	// Metrics records grades; nil records nothing.
	Metrics *Metrics
	// RescueAfter is the service's job rescue time (DefaultJobRescueAfter
	// when zero); SyncInterval how often every active ticket is synced
	// with the store (DefaultSyncInterval when zero).
	RescueAfter  time.Duration
	SyncInterval time.Duration
	// SandboxSweepInterval is how often a grading replica removes its
	// engine's leftover sandboxes (DefaultSandboxSweepInterval when zero).
	SandboxSweepInterval time.Duration
	// GradingOff says why a service built with NewSetup does not grade
	// (no store keys, no Docker engine): its check runs and command
	// replies say it.
	GradingOff error
	// Agents runs the writers and implementers repositories name; nil
	// runs none (a repository that names one is told its config is
	// wrong). Only a grading service runs them.
	Agents *Agents
	// RequireUIDSplit refuses every grade whose uid split was not proven
	// (TESTFIRST_UID_SPLIT=required), whatever the repository says.
	RequireUIDSplit bool
	// Split grades every repository split (TESTFIRST_SPLIT=on), whatever
	// its grading.split says.
	Split bool
}

// Sealed is what grading needs: the hidden-test store opened as the web
// side (Writer) and as the grader (Reader), the sealed grader, and the
// engine its sandboxes run on (Sandboxes), kept clean of leftovers.
type Sealed struct {
	Writer    *store.Writer
	Reader    *store.Reader
	Grader    *grader.Grader
	Sandboxes Sandboxes
}

// Setup is the River configuration of the pipeline's workers, and, on a
// replica that grades, the sweep of its engine's leftover sandboxes, which
// the service runs beside them (each replica its own, not a River job that
// one replica would run for all).
type Setup struct {
	Workers  *river.Workers
	Queues   map[string]river.QueueConfig
	Periodic []*river.PeriodicJob
	// Sweeper is nil on a replica that does not grade.
	Sweeper *SandboxSweeper
}

// NewSetup builds the workers of a service that does not grade: it
// records deliveries, tickets and pull requests, cancels grades and sweeps
// the delivery log, and grades nothing.
func NewSetup(cfg Config) Setup {
	q := &gradeQueue{db: cfg.DB, publicURL: cfg.PublicURL, log: cfg.Log}
	why := "the service was started without the hidden-test store or the sandbox"
	if cfg.GradingOff != nil {
		why = cfg.GradingOff.Error()
	}
	return newSetup(cfg, notGrading{q, why}, nil, nil)
}

// NewGradingSetup builds the workers of a service that grades: with
// NewSetup's, the grades, the base checks and the store sync, and the
// sandbox queue they run in.
func NewGradingSetup(cfg Config, s Sealed) Setup {
	q := &gradeQueue{db: cfg.DB, store: s.Writer, publicURL: cfg.PublicURL, log: cfg.Log}
	var aq *agentQueue
	if cfg.Agents != nil {
		aq = &agentQueue{db: cfg.DB, cfg: cfg.Agents.Config, log: cfg.Log}
	}
	ps := newPastedScanner(cfg.DB, s.Writer, cfg.GitHub, cfg.Log)
	set := newSetup(cfg, q, aq, ps)
	river.AddWorker(set.Workers, &GradeWorker{db: cfg.DB, github: cfg.GitHub, reader: s.Reader, grader: s.Grader, sandboxes: s.Sandboxes, grades: q, agents: aq,
		metrics: cfg.Metrics, log: cfg.Log, rescueAfter: cfg.RescueAfter, requireUIDSplit: cfg.RequireUIDSplit, split: cfg.Split})
	if aq != nil {
		aw := &agentWorker{db: cfg.DB, github: cfg.GitHub, agents: aq, runner: cfg.Agents.Runner, store: s.Writer, canaries: s.Reader, pasted: ps, grades: q,
			metrics: cfg.Metrics, log: cfg.Log, rescueAfter: cfg.RescueAfter}
		river.AddWorker(set.Workers, &WriterWorker{agentWorker: aw})
		river.AddWorker(set.Workers, &ImplementerWorker{agentWorker: aw})
		set.Queues[QueueAgents] = river.QueueConfig{MaxWorkers: 1}
	}
	river.AddWorker(set.Workers, &VersionCheckWorker{db: cfg.DB, github: cfg.GitHub, store: s.Reader, grader: s.Grader, sandboxes: s.Sandboxes,
		metrics: cfg.Metrics, log: cfg.Log, rescueAfter: cfg.RescueAfter})
	river.AddWorker(set.Workers, &RegressionsWorker{db: cfg.DB, github: cfg.GitHub, grader: s.Grader, sandboxes: s.Sandboxes, grades: q,
		metrics: cfg.Metrics, log: cfg.Log, rescueAfter: cfg.RescueAfter})
	river.AddWorker(set.Workers, &SyncWorker{db: cfg.DB, github: cfg.GitHub, store: s.Writer, grades: q, agents: aq, publicURL: cfg.PublicURL, log: cfg.Log})
	river.AddWorker(set.Workers, &KeepTestsWorker{db: cfg.DB, github: cfg.GitHub, store: s.Writer, log: cfg.Log, requireUIDSplit: cfg.RequireUIDSplit})
	set.Queues[QueueSandbox] = river.QueueConfig{MaxWorkers: sandboxWorkers(cfg.DB.Engine())}
	set.Periodic = append(set.Periodic, SyncPeriodicJob(syncInterval(cfg)))
	if s.Sandboxes != nil {
		set.Sweeper = NewSandboxSweeper(s.Sandboxes, cfg.SandboxSweepInterval, cfg.Metrics, cfg.Log)
		cfg.Metrics.countSandboxes(s.Sandboxes)
	}
	return set
}

func newSetup(cfg Config, g grading, aq *agentQueue, ps *pastedScanner) Setup {
	workers := river.NewWorkers()
	// A service with the store's writer (its pasted scanner's) works the
	// keep_tests jobs that approvals and merges enqueue.
	river.AddWorker(workers, &DeliveryWorker{db: cfg.DB, github: cfg.GitHub, grades: g, agents: aq, pasted: ps, keeps: ps != nil, log: cfg.Log,
		publicURL: cfg.PublicURL})
	river.AddWorker(workers, NewRedeliverWorker(cfg.DB, cfg.GitHub, cfg.Log))
	return Setup{Workers: workers, Queues: Queues(cfg.DB.Engine()),
		Periodic: []*river.PeriodicJob{RedeliverPeriodicJob(DefaultRedeliverInterval)}}
}
