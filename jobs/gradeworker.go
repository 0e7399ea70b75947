package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/riverqueue/river"

	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/grader"
	"github.com/testfirst-app/testfirst/pipeline"
	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/sandbox"
	"github.com/testfirst-app/testfirst/store"
)

// cancelPoll is how often a running grade looks whether it was cancelled.
const cancelPoll = 2 * time.Second

// GradeWorker grades: it fetches the base and head trees with the
// installation token outside the sandbox, opens the approved version fresh
// from the store, runs the sealed grader and completes the check run. A
// grade cancelled meanwhile (a newer push, a reopened approval) stops its
// sandbox and leaves its check run cancelled.
type GradeWorker struct {
	river.WorkerDefaults[GradeArgs]
	db     *db.DB
	github installationClients
	reader approvedTests
	grader *grader.Grader
	// sandboxes is the engine the grader runs on; nil when unknown.
	sandboxes Sandboxes
	grades    *gradeQueue
	// agents starts an implementer's next round after a failing grade of
	// its commit; nil on a service without agents.
	agents  *agentQueue
	metrics *Metrics
	log     *slog.Logger
	// rescueAfter is the service's job rescue time; see SandboxJobTimeout.
	rescueAfter time.Duration
	// requireUIDSplit is the service's TESTFIRST_UID_SPLIT=required.
	requireUIDSplit bool
	// split is the service's TESTFIRST_SPLIT=on.
	split bool
}

// splits reports whether a repository's grades are split: the service's
// TESTFIRST_SPLIT=on, or the repository's grading.split: on.
func (w *GradeWorker) splits(cfg pipeline.RepoConfig) bool {
	return w.split || cfg.Split == pipeline.SplitOn
}

// uidSplitRequiredBy names the setting that requires the uid split for a
// repository's grades, the service's first; empty when none does.
func (w *GradeWorker) uidSplitRequiredBy(cfg pipeline.RepoConfig) string {
	switch {
	case w.requireUIDSplit:
		return "TESTFIRST_UID_SPLIT=required"
	case cfg.UIDSplit == pipeline.UIDSplitRequired:
		return "grading.uid_split: required"
	}
	return ""
}

// Timeout implements river.Worker; see SandboxJobTimeout.
func (w *GradeWorker) Timeout(*river.Job[GradeArgs]) time.Duration {
	return SandboxJobTimeout(w.rescueAfter)
}

// errCancelled ends a grade whose row was cancelled while it ran.
var errCancelled = errors.New("grade cancelled")

// Work implements river.Worker. On its last attempt, a failure completes
// the check run saying the grade failed, so no run is left in progress. An
// attempt after the first removes the sandboxes of the earlier ones first:
// a replica that died mid-grade left its sandbox running.
func (w *GradeWorker) Work(ctx context.Context, job *river.Job[GradeArgs]) error {
	removeEarlierSandboxes(ctx, w.sandboxes, w.metrics, w.log, job.JobRow)
	g, tk, repo, err := w.load(ctx, job.Args.Grade)
	if errors.Is(err, db.ErrNotFound) {
		return river.JobCancel(err)
	}
	if err != nil {
		return err
	}
	log := w.log.With("grade", g.ID, "ticket", tk.ID, "installation", repo.InstallationID, "repo", repo.Owner+"/"+repo.Name)
	gi, err := w.github.Installation(repo.InstallationID)
	if err != nil {
		return err
	}
	if g.State == pipeline.GradeCancelled {
		return w.grades.completeCheckRuns(ctx, gi, repo, g, pipeline.CancelledCheckRun("This grade was cancelled before it ran."))
	}
	if g.State == pipeline.GradeCompleted {
		return w.finishCheckRuns(ctx, log, gi, g, tk, repo)
	}
	labels := jobLabels(job.JobRow, map[string]string{sandbox.LabelGrade: strconv.FormatInt(g.ID, 10)})
	err = w.work(ctx, log, gi, g, tk, repo, labels)
	var cancel *river.JobCancelError
	final := job.Attempt >= job.MaxAttempts || errors.As(err, &cancel)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errCancelled):
		log.InfoContext(ctx, "grade stopped: cancelled")
		return nil
	case final:
		log.ErrorContext(ctx, "grade failed for good", "attempt", job.Attempt, "err", err)
		return errors.Join(err, w.fail(ctx, gi, repo, g, fmt.Sprintf("The grade could not be completed after %d attempts: %v", job.Attempt, err)))
	default:
		log.WarnContext(ctx, "grade failed; River retries", "attempt", job.Attempt, "err", err)
		return err
	}
}

func (w *GradeWorker) load(ctx context.Context, id int64) (g db.Grade, tk db.Ticket, repo db.Repository, err error) {
	return loadGrade(ctx, w.db, id)
}

// loadGrade reads grade id with its ticket and repository.
func loadGrade(ctx context.Context, d *db.DB, id int64) (g db.Grade, tk db.Ticket, repo db.Repository, err error) {
	err = d.Tx(ctx, func(tx *db.Tx) error {
		if g, err = tx.Grade(ctx, id); err != nil {
			return err
		}
		if tk, err = tx.Ticket(ctx, g.TicketID); err != nil {
			return err
		}
		repo, err = tx.Repository(ctx, tk.RepositoryID)
		return err
	})
	return g, tk, repo, err
}

// work grades g, its sandboxes labelled with labels.
func (w *GradeWorker) work(ctx context.Context, log *slog.Logger, gi *github.Installation, g db.Grade, tk db.Ticket, repo db.Repository, labels map[string]string) error {
	if err := w.db.Tx(ctx, func(tx *db.Tx) error {
		g.State, g.StartedAt = pipeline.GradeRunning, time.Now()
		return tx.UpdateGrade(ctx, g)
	}); err != nil {
		return err
	}
	log.InfoContext(ctx, "grading", "head_sha", g.HeadSHA, "digest", g.Digest)
	var err error
	if g.CheckRunID, err = w.grades.ensureCheckRun(ctx, gi, repo, g,
		pipeline.RunningCheckRun(g.HeadSHA, g.VersionNumber, pipeline.PhaseFetching, w.grades.detailsURL(g.ID)), pipeline.GradeRunning); err != nil {
		return err
	}
	// The grades behind this one moved up.
	w.grades.refreshQueue(ctx, w.github)
	ctx, stop := w.watch(ctx, g.ID)
	defer stop()

	content, v, err := w.openApproved(ctx, repo, tk, g)
	if err != nil {
		if context.Cause(ctx) == errCancelled {
			return errCancelled
		}
		return w.fail(ctx, gi, repo, g, fmt.Sprintf("The hidden tests could not be opened: %v", err))
	}
	fc := pipeline.FetchConfig(ctx, gi, repo.Owner, repo.Name, repo.DefaultBranch)
	switch {
	case fc.LoadError != nil:
		return w.cancelledOr(ctx, retryOrCancel(fc.LoadError))
	case fc.ParseError != nil:
		return w.fail(ctx, gi, repo, g, pipeline.ConfigErrorSummary(fc.ParseError))
	}
	cfg := fc.Config
	base, err := downloadTree(ctx, gi, repo, tk.BaseSHA)
	if err != nil {
		return w.cancelledOr(ctx, retryOrCancel(err))
	}
	head, err := downloadTree(ctx, gi, repo, g.HeadSHA)
	if err != nil {
		return w.cancelledOr(ctx, retryOrCancel(err))
	}
	hidden, err := content.HiddenTree()
	if err != nil {
		return w.fail(ctx, gi, repo, g, "The hidden tests are not a valid tree: "+err.Error())
	}
	exclude, err := w.twinExclude(ctx, tk.ID, v.Number)
	if err != nil {
		return err
	}
	// The check run follows the grade's stages; a failed update is logged,
	// never the grade's end: the completed run says the verdict anyway.
	stage := func(s grader.Stage) {
		p := pipeline.PhaseGrading
		if s == grader.StageEnvironment {
			p = pipeline.PhaseEnvironment
		}
		if err := w.grades.phase(ctx, gi, repo, g, p); err != nil {
			log.WarnContext(ctx, "check run phase", "phase", p, "err", err)
		}
	}
	rep, err := w.grader.Grade(ctx, grader.Request{Repo: head, Hidden: hidden, Base: base, Reference: content.Reference,
		TestsDigest: g.Digest, Timeout: cfg.Timeout, Limits: sandboxLimits(cfg), TwinExclude: exclude,
		Python: cfg.Python, Mirror: cfg.Network == report.NetworkMirror, TrustedCollection: true, Stage: stage, Labels: labels,
		Split: w.splits(cfg)})
	if err != nil {
		return w.cancelledOr(ctx, err) // the engine failed: River retries
	}
	if context.Cause(ctx) == errCancelled {
		return errCancelled
	}
	// What the ticket's agents add: the warnings every grade carries, and
	// the contamination of the run that made this head.
	warnings, run, err := gradeContext(ctx, w.db, tk.ID, g.HeadSHA)
	if err != nil {
		return err
	}
	applyRun(rep, run)
	if err := applyPasted(ctx, w.db, tk.ID, rep); err != nil {
		return err
	}
	if err := applyKept(ctx, w.db, tk.ID, g.HeadSHA, rep); err != nil {
		return err
	}
	passed := rep.Verdict == report.VerdictPass
	report, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	graded, err := pipeline.ParseReport(report)
	if err != nil {
		return err
	}
	approval, err := approvalFacts(ctx, w.db, tk.ID, v.Number)
	if err != nil {
		return err
	}
	cr, refusedBy := w.gradedCheckRun(g, tk, repo, graded, v.Number, content.Criteria, warnings, approval, w.uidSplitRequiredBy(cfg))
	// The row first: once the check run says completed, the grade is.
	var cancelled bool
	if err := w.db.Tx(ctx, func(tx *db.Tx) error {
		cur, err := tx.Grade(ctx, g.ID)
		if err != nil {
			return err
		}
		if cancelled = cur.State == pipeline.GradeCancelled; cancelled {
			return nil
		}
		g.State, g.FinishedAt = pipeline.GradeCompleted, time.Now()
		g.Verdict, g.Trust = string(rep.Verdict), string(rep.Trust)
		c := rep.Counts
		g.Total, g.Passed, g.Failed, g.Errored, g.Skipped = c.Total, c.Passed, c.Failed, c.Errors, c.Skipped
		if err := tx.UpdateGrade(ctx, g); err != nil {
			return err
		}
		if err := tx.SetGradeReport(ctx, g.ID, report); err != nil {
			return err
		}
		fields := map[string]any{"grade": g.ID, "verdict": rep.Verdict, "trust": rep.Trust,
			"head_sha": g.HeadSHA, "digest": g.Digest, "passed": c.Passed, "total": c.Total}
		if refusedBy != "" {
			fields["refused"] = "uid split not proven; required by " + refusedBy
		}
		if passed && refusedBy == "" && cfg.KeepTests != pipeline.KeepOff {
			// The pass may keep the tests, once a reviewer approves too
			// (the review's delivery enqueues the same job).
			if err := tx.InsertJob(ctx, KeepTestsArgs{Ticket: tk.ID, PR: g.PRNumber}, nil); err != nil {
				return err
			}
		}
		if cfg.Regressions.Enabled {
			// The repository's own suite runs after the grade, in a job
			// of its own, so that a large suite never holds this check.
			if err := tx.SaveRegressionRun(ctx, db.RegressionRun{GradeID: g.ID, TicketID: tk.ID, HeadSHA: g.HeadSHA, State: db.RegressionQueued}); err != nil {
				return err
			}
			if err := tx.InsertJob(ctx, RegressionsArgs{Grade: g.ID}, nil); err != nil {
				return err
			}
		}
		return audit(ctx, tx, "testfirst", tk.ID, "grade.completed", fields)
	}); err != nil {
		return err
	}
	if cancelled {
		return errCancelled
	}
	if err := w.grades.completeCheckRuns(context.WithoutCancel(ctx), gi, repo, g, cr); err != nil {
		return err
	}
	w.metrics.graded(string(rep.Verdict), string(rep.Trust), time.Since(g.StartedAt))
	if refusedBy != "" {
		log.WarnContext(ctx, "grade refused: uid split not proven", "required_by", refusedBy, "trust", rep.Trust, "runtime", rep.Runtime)
	}
	log.InfoContext(ctx, "graded", "verdict", rep.Verdict, "trust", rep.Trust, "passed", rep.Counts.Passed, "total", rep.Counts.Total)
	if err := w.agents.afterGrade(context.WithoutCancel(ctx), tk, g, rep, run, cfg); err != nil {
		// The grade stands; the round is started again by a Regrade.
		log.ErrorContext(ctx, "next implementer round not started", "err", err)
	}
	return nil
}

// watch returns a context that ends, with cause errCancelled, when the
// grade's row is cancelled.
func (w *GradeWorker) watch(ctx context.Context, id int64) (context.Context, func()) {
	return watchCancelled(ctx, w.db, errCancelled, func(tx *db.Tx) (bool, error) {
		g, err := tx.Grade(ctx, id)
		return g.State == pipeline.GradeCancelled, err
	})
}

// watchCancelled returns a context that ends with cause when cancelled,
// asked every cancelPoll, says a row was cancelled; the returned function
// stops the watch.
func watchCancelled(ctx context.Context, d *db.DB, cause error, cancelled func(*db.Tx) (bool, error)) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(cancelPoll)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			var yes bool
			err := d.Tx(ctx, func(tx *db.Tx) error {
				var err error
				yes, err = cancelled(tx)
				return err
			})
			if err == nil && yes {
				cancel(cause)
				return
			}
		}
	}()
	return ctx, func() { close(done); cancel(nil) }
}

// storeOpenTimeout bounds opening the approved version. The store's client
// retries a store that does not answer meanwhile; past it the grade fails
// saying so, instead of holding its check run in progress until the job's
// own timeout (an hour or more) while the store is down.
const storeOpenTimeout = time.Minute

// openApproved opens the grade's approved version from the store (its
// digest checked by the store's reader), within storeOpenTimeout.
func (w *GradeWorker) openApproved(ctx context.Context, repo db.Repository, tk db.Ticket, g db.Grade) (*store.Content, store.Version, error) {
	ctx, cancel := context.WithTimeout(ctx, storeOpenTimeout)
	defer cancel()
	content, v, err := w.reader.Open(ctx, storeTicket(repo, tk.IssueNumber), g.Digest)
	// Past this bound or the job's own deadline, whichever came first.
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("the hidden-test store did not answer in time (at most %s): %w", storeOpenTimeout, err)
	}
	return content, v, err
}

// cancelledOr returns errCancelled when the grade was cancelled, else err.
func (w *GradeWorker) cancelledOr(ctx context.Context, err error) error {
	if context.Cause(ctx) == errCancelled {
		return errCancelled
	}
	return err
}

// fail records a grade that could not be made and completes its check
// runs saying why; the grade is final (a Regrade starts another).
func (w *GradeWorker) fail(ctx context.Context, gi *github.Installation, repo db.Repository, g db.Grade, why string) error {
	ctx = context.WithoutCancel(ctx)
	if err := w.db.Tx(ctx, func(tx *db.Tx) error {
		cur, err := tx.Grade(ctx, g.ID)
		if err != nil {
			return err
		}
		cur.State, cur.Verdict, cur.FinishedAt = pipeline.GradeCompleted, string(report.VerdictError), time.Now()
		if err := tx.UpdateGrade(ctx, cur); err != nil {
			return err
		}
		return audit(ctx, tx, "testfirst", cur.TicketID, "grade.failed", map[string]any{"grade": g.ID, "why": why})
	}); err != nil {
		return err
	}
	w.metrics.graded(string(report.VerdictError), "", time.Since(g.StartedAt))
	return w.grades.completeCheckRuns(ctx, gi, repo, g, pipeline.FailedCheckRun(why, w.grades.detailsURL(g.ID)))
}

// twinExclude lists the hidden tests of a version whose twins must not
// judge a pull request: what the version's base check found (twins its
// reference passed, flaky tests). A version whose check is missing or
// unreadable excludes nothing; with a reference patch the grade still drops
// the twins the reference passes.
func (w *GradeWorker) twinExclude(ctx context.Context, ticketID int64, number int) ([]string, error) {
	var raw json.RawMessage
	if err := w.db.Tx(ctx, func(tx *db.Tx) error {
		v, err := tx.Version(ctx, ticketID, number)
		raw = v.Check
		return err
	}); err != nil {
		return nil, fmt.Errorf("read version %d's base check: %w", number, err)
	}
	check, err := pipeline.ParseCheck(raw)
	if err != nil {
		return nil, nil
	}
	return check.TwinExclude(), nil
}
