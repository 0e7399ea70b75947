package jobs

import (
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/grader"
	"github.com/testfirst-app/testfirst/grader/store"
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
	// GradingOff says why a service built with NewSetup does not grade
	// (no store keys, no Docker engine): its check runs and command
	// replies say it.
	GradingOff error
	// RequireUIDSplit refuses every grade whose uid split was not proven
	// (TESTFIRST_UID_SPLIT=required), whatever the repository says.
	RequireUIDSplit bool
}

// Sealed is what grading needs: the hidden-test store opened as the web
// side (Writer) and as the grader (Reader), and the sealed grader.
type Sealed struct {
	Writer *store.Writer
	Reader *store.Reader
	Grader *grader.Grader
}

// Setup is the River configuration of the pipeline's workers.
type Setup struct {
	Workers  *river.Workers
	Queues   map[string]river.QueueConfig
	Periodic []*river.PeriodicJob
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
	return newSetup(cfg, notGrading{q, why})
}

// NewGradingSetup builds the workers of a service that grades: with
// NewSetup's, the grades, the base checks and the store sync, and the
// sandbox queue they run in.
func NewGradingSetup(cfg Config, s Sealed) Setup {
	q := &gradeQueue{db: cfg.DB, store: s.Writer, publicURL: cfg.PublicURL, log: cfg.Log}
	set := newSetup(cfg, q)
	river.AddWorker(set.Workers, &GradeWorker{db: cfg.DB, github: cfg.GitHub, reader: s.Reader, grader: s.Grader, grades: q,
		metrics: cfg.Metrics, log: cfg.Log, rescueAfter: cfg.RescueAfter, requireUIDSplit: cfg.RequireUIDSplit})
	river.AddWorker(set.Workers, &VersionCheckWorker{db: cfg.DB, github: cfg.GitHub, store: s.Reader, grader: s.Grader, log: cfg.Log,
		rescueAfter: cfg.RescueAfter})
	river.AddWorker(set.Workers, &SyncWorker{db: cfg.DB, github: cfg.GitHub, store: s.Writer, grades: q, publicURL: cfg.PublicURL, log: cfg.Log})
	set.Queues[QueueSandbox] = river.QueueConfig{MaxWorkers: sandboxWorkers(cfg.DB.Engine())}
	set.Periodic = append(set.Periodic, SyncPeriodicJob(syncInterval(cfg)))
	return set
}

func newSetup(cfg Config, g grading) Setup {
	workers := river.NewWorkers()
	river.AddWorker(workers, &DeliveryWorker{db: cfg.DB, github: cfg.GitHub, grades: g, log: cfg.Log, publicURL: cfg.PublicURL})
	river.AddWorker(workers, NewRedeliverWorker(cfg.DB, cfg.GitHub, cfg.Log))
	return Setup{Workers: workers, Queues: Queues(cfg.DB.Engine()),
		Periodic: []*river.PeriodicJob{RedeliverPeriodicJob(DefaultRedeliverInterval)}}
}
