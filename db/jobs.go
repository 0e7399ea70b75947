package db

import (
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// JobClient is a River client bound to this database's engine: it works the
// queues it was made for and can insert jobs outside a transaction. Jobs that
// belong with a state change go through Tx.InsertJob instead.
type JobClient struct {
	riverClient
}

// riverClient is the engine-independent part of *river.Client[TTx].
type riverClient interface {
	// Start starts fetching and working jobs; it fails when the client has
	// no queues or workers, or was already started.
	Start(ctx context.Context) error
	// Stop stops fetching and waits for running jobs to finish or ctx to end.
	Stop(ctx context.Context) error
	// StopAndCancel stops fetching and cancels the running jobs' contexts.
	StopAndCancel(ctx context.Context) error
	// Stopped is closed once the client has stopped after a Start.
	Stopped() <-chan struct{}
	// Insert inserts a job outside any transaction.
	Insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
	// JobGet returns a job by id; rivertype.ErrNotFound when there is none.
	JobGet(ctx context.Context, id int64) (*rivertype.JobRow, error)
	// JobCancel cancels a job; rivertype.ErrNotFound when there is none.
	JobCancel(ctx context.Context, id int64) (*rivertype.JobRow, error)
	// JobList lists jobs matching params.
	JobList(ctx context.Context, params *river.JobListParams) (*river.JobListResult, error)
	// Subscribe delivers job events of the given kinds until cancel is called.
	Subscribe(kinds ...river.EventKind) (<-chan *river.Event, func())
}

type jobClient[TTx any] struct{ *river.Client[TTx] }

// JobClientOption tunes a JobClient.
type JobClientOption func(*river.Config)

// WithRiverConfig lets the caller set any other River option (logger, fetch
// intervals, retry policy, middleware, periodic jobs, …). Workers and Queues
// given to NewJobClient win over what it sets.
func WithRiverConfig(f func(*river.Config)) JobClientOption { return JobClientOption(f) }

// JobFetchCooldown is the least time between two fetches of a queue's jobs
// (River's minimum). River's default of 100 ms caps a queue at MaxWorkers
// jobs per 100 ms: 10 jobs/s for SQLite's single worker, 40 for four.
// Fetches happen only when a job finishes, a job is inserted (PostgreSQL's
// LISTEN/NOTIFY) or the poll interval passes, so an idle queue costs
// nothing more.
const JobFetchCooldown = time.Millisecond

// NewJobClient makes a River client that works queues with workers on this
// database, fetching with JobFetchCooldown and the engine's poll interval
// (see the engines' fetchPollInterval) unless opts say otherwise. Call Start on it to begin and Stop before DB.Close. It fails when
// River rejects the configuration (for example a queue with MaxWorkers < 1).
func (d *DB) NewJobClient(workers *river.Workers, queues map[string]river.QueueConfig, opts ...JobClientOption) (*JobClient, error) {
	c, err := d.eng.newJobClient(d.jobConfig(workers, queues, opts))
	if err != nil {
		return nil, fmt.Errorf("create River client: %w", err)
	}
	return c, nil
}

// QueueLoad is the number of jobs of one queue in one state.
type QueueLoad struct {
	Queue string
	State string
	Jobs  int
}

// QueueDepth counts the jobs waiting (available, scheduled, retryable) and
// running, by queue and state.
func (d *DB) QueueDepth(ctx context.Context) ([]QueueLoad, error) {
	rs, err := d.eng.querier().query(ctx, `SELECT queue, state, count(*) FROM river_job
WHERE state IN ('available', 'scheduled', 'retryable', 'running') GROUP BY queue, state ORDER BY queue, state`)
	if err != nil {
		return nil, fmt.Errorf("count queued jobs: %w", err)
	}
	defer rs.Close()
	var out []QueueLoad
	for rs.Next() {
		var l QueueLoad
		if err := rs.Scan(&l.Queue, &l.State, &l.Jobs); err != nil {
			return nil, fmt.Errorf("count queued jobs: %w", err)
		}
		out = append(out, l)
	}
	return out, rs.Err()
}

// jobConfig is the River configuration NewJobClient starts from.
func (d *DB) jobConfig(workers *river.Workers, queues map[string]river.QueueConfig, opts []JobClientOption) *river.Config {
	cfg := &river.Config{FetchCooldown: JobFetchCooldown, FetchPollInterval: d.eng.fetchPollInterval()}
	for _, o := range opts {
		o(cfg)
	}
	cfg.Workers = workers
	cfg.Queues = queues
	return cfg
}
