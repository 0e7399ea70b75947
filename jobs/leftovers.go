package jobs

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/testfirst-app/testfirst/sandbox"
)

// DefaultSandboxSweepInterval is how often each replica removes the
// leftover sandboxes of its engine unless the service says otherwise.
const DefaultSandboxSweepInterval = time.Minute

// sweepTimeout bounds one sweep of the engine's leftovers.
const sweepTimeout = 30 * time.Second

// Sandboxes is the slice of the sandbox engine the service keeps clean
// with, beside the grader that runs on it; *docker.Engine implements it.
// Each method fails with the engine's error.
type Sandboxes interface {
	// Sweep removes the sandbox containers whose deadline passed (with a
	// grace) at now, whoever started them, and returns how many.
	Sweep(ctx context.Context, now time.Time) (int, error)
	// RemoveLabelled kills and removes the sandbox containers labelled
	// key=value and returns how many.
	RemoveLabelled(ctx context.Context, key, value string) (int, error)
	// Running counts the sandbox containers running on the engine.
	Running(ctx context.Context) (int, error)
}

// SandboxSweeper removes the sandboxes left behind on this replica's
// engine: every replica runs one, as each may have an engine of its own,
// and a replica that never restarts must still clear what a crash left.
// Sandboxes remove themselves when they end; what it finds is a sandbox
// whose process died before it ended and that outlived its deadline, or a
// build container whose process died.
type SandboxSweeper struct {
	sandboxes Sandboxes
	interval  time.Duration
	metrics   *Metrics
	log       *slog.Logger
}

// NewSandboxSweeper returns the sweep of s every interval
// (DefaultSandboxSweepInterval when zero), counting what it removes in m and
// logging to log.
func NewSandboxSweeper(s Sandboxes, interval time.Duration, m *Metrics, log *slog.Logger) *SandboxSweeper {
	if interval <= 0 {
		interval = DefaultSandboxSweepInterval
	}
	if log == nil {
		log = slog.Default()
	}
	return &SandboxSweeper{sandboxes: s, interval: interval, metrics: m, log: log}
}

// Run sweeps at once, then an interval after each sweep ended, until ctx
// ends: a slow engine, whose sweep takes longer than the interval, is not
// swept again at once. A failed sweep is logged; the next one does the same
// work.
func (s *SandboxSweeper) Run(ctx context.Context) {
	t := time.NewTimer(s.interval)
	defer t.Stop()
	for {
		s.sweep(ctx)
		t.Reset(s.interval)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (s *SandboxSweeper) sweep(ctx context.Context) {
	sctx, cancel := context.WithTimeout(ctx, sweepTimeout)
	defer cancel()
	n, err := s.sandboxes.Sweep(sctx, time.Now())
	s.metrics.leftoversRemoved(leftoverPastDeadline, n)
	if n > 0 {
		s.log.InfoContext(ctx, "sandbox sweep", "removed", n)
	}
	if err != nil && ctx.Err() == nil {
		s.log.WarnContext(ctx, "sandbox sweep failed", "removed", n, "err", err)
	}
}

// Why a leftover sandbox was removed, the label of
// testfirst_sandbox_leftovers_removed_total.
const (
	leftoverPastDeadline = "past_deadline"
	leftoverRescuedJob   = "rescued_job"
)

// jobLabels are the labels of the sandboxes job runs, with more (the
// grade's) when given.
func jobLabels(job *rivertype.JobRow, more map[string]string) map[string]string {
	labels := map[string]string{sandbox.LabelJob: jobLabel(job)}
	for k, v := range more {
		labels[k] = v
	}
	return labels
}

// removeEarlierSandboxes kills and removes the sandboxes an earlier attempt
// of job left: a job taken over from a dead replica starts again here, and
// the sandbox that replica started must not run on beside the new one until
// its deadline. A first attempt has none. The engine may not answer: the
// attempt goes on, and the sweep removes what is left once past its
// deadline.
func removeEarlierSandboxes(ctx context.Context, s Sandboxes, m *Metrics, log *slog.Logger, job *rivertype.JobRow) {
	if s == nil || job.Attempt <= 1 {
		return
	}
	id := jobLabel(job)
	n, err := s.RemoveLabelled(ctx, sandbox.LabelJob, id)
	m.leftoversRemoved(leftoverRescuedJob, n)
	if n > 0 {
		log.InfoContext(ctx, "removed the sandboxes of an earlier attempt", "job", job.ID, "attempt", job.Attempt, "removed", n)
	}
	if err != nil {
		log.WarnContext(ctx, "remove the sandboxes of an earlier attempt", "job", job.ID, "attempt", job.Attempt, "removed", n, "err", err)
	}
}

// jobLabel is the value of sandbox.LabelJob on the sandboxes of job: its id
// and the time it was created, which every attempt reads back the same. The
// id alone repeats across databases: two installations of the service (a
// staging copy beside production) may share an engine, and a rescue of job 7
// in one must not remove what job 7 of the other runs. A job without a
// creation time (none comes from the queue) is labelled with its id.
func jobLabel(job *rivertype.JobRow) string {
	id := strconv.FormatInt(job.ID, 10)
	if job.CreatedAt.IsZero() {
		return id
	}
	return id + "-" + strconv.FormatInt(job.CreatedAt.UnixMicro(), 10)
}
