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
	"github.com/riverqueue/river/rivertype"

	"github.com/testfirst-app/testfirst/checkrun"
	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/grader"
	"github.com/testfirst-app/testfirst/pipeline"
	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/sandbox"
)

// RegressionsArgs is the regression run of a pull request's grade: the
// base's own test suite run on the base and on the graded head, posted as
// the check run pipeline.RegressionsCheckRunName. The grade enqueues it
// as it completes, so a large suite never holds the grade's own check.
type RegressionsArgs struct {
	Grade int64 `json:"grade"`
}

// Kind implements river.JobArgs.
func (RegressionsArgs) Kind() string { return "regressions" }

// InsertOpts implements river.JobArgsWithInsertOpts: it runs in the
// sandbox queue, once per grade.
func (RegressionsArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueSandbox, MaxAttempts: 3, UniqueOpts: river.UniqueOpts{ByArgs: true,
		ByState: []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning, rivertype.JobStateScheduled, rivertype.JobStateRetryable}}}
}

// RegressionsWorker makes regression runs: it fetches the base and head
// trees with the installation token outside the sandbox, runs
// grader.Regress in the sealed sandboxes and completes the check run with
// counts and ids; the output is kept for the requester.
type RegressionsWorker struct {
	river.WorkerDefaults[RegressionsArgs]
	db        *db.DB
	github    installationClients
	grader    *grader.Grader
	sandboxes Sandboxes
	grades    *gradeQueue
	metrics   *Metrics
	log       *slog.Logger
	// rescueAfter is the service's job rescue time; see SandboxJobTimeout.
	rescueAfter time.Duration
}

// Timeout implements river.Worker; see SandboxJobTimeout.
func (w *RegressionsWorker) Timeout(*river.Job[RegressionsArgs]) time.Duration {
	return SandboxJobTimeout(w.rescueAfter)
}

// Work implements river.Worker. On its last attempt a failure completes
// the check run neutral, saying why, so none is left in progress.
func (w *RegressionsWorker) Work(ctx context.Context, job *river.Job[RegressionsArgs]) error {
	removeEarlierSandboxes(ctx, w.sandboxes, w.metrics, w.log, job.JobRow)
	g, tk, repo, err := loadGrade(ctx, w.db, job.Args.Grade)
	var run db.RegressionRun
	if err == nil {
		err = w.db.Tx(ctx, func(tx *db.Tx) error {
			var err error
			run, err = tx.RegressionRunOf(ctx, g.ID)
			if errors.Is(err, db.ErrNotFound) {
				run, err = db.RegressionRun{GradeID: g.ID, TicketID: tk.ID, HeadSHA: g.HeadSHA, State: db.RegressionQueued}, nil
			}
			return err
		})
	}
	if errors.Is(err, db.ErrNotFound) {
		return river.JobCancel(err)
	}
	if err != nil {
		return err
	}
	if run.State == db.RegressionCompleted {
		return nil
	}
	log := w.log.With("grade", g.ID, "ticket", tk.ID, "repo", repo.Owner+"/"+repo.Name, "head_sha", g.HeadSHA)
	gi, err := w.github.Installation(repo.InstallationID)
	if err != nil {
		return err
	}
	details := w.grades.detailsURL(g.ID)
	if run.CheckRunID, err = w.ensureCheckRun(ctx, gi, repo, g, run, details); err != nil {
		return err
	}
	run.State = db.RegressionRunning
	if err := w.save(ctx, run); err != nil {
		return err
	}
	labels := jobLabels(job.JobRow, map[string]string{sandbox.LabelGrade: strconv.FormatInt(g.ID, 10)})
	rep, err := w.regress(ctx, gi, repo, tk, g, labels)
	var cancel *river.JobCancelError
	if err != nil {
		if job.Attempt < job.MaxAttempts && !errors.As(err, &cancel) {
			log.WarnContext(ctx, "regression run failed; River retries", "attempt", job.Attempt, "err", err)
			return err
		}
		log.ErrorContext(ctx, "regression run failed for good", "attempt", job.Attempt, "err", err)
		why := fmt.Sprintf("The regression run could not be made after %d attempts: %v", job.Attempt, err)
		run.State, run.Verdict, run.FinishedAt = db.RegressionCompleted, string(report.VerdictError), time.Now()
		return errors.Join(err, w.save(ctx, run),
			w.update(ctx, gi, repo, run.CheckRunID, pipeline.FailedRegressionsCheckRun(g.HeadSHA, g.ID, why, details)))
	}
	public := *rep
	public.Output, public.OutputTruncated = "", false
	raw, err := json.Marshal(public)
	if err != nil {
		return err
	}
	run.State, run.Verdict, run.Report, run.Output, run.FinishedAt = db.RegressionCompleted, string(rep.Verdict), raw, rep.Output, time.Now()
	if err := w.db.Tx(ctx, func(tx *db.Tx) error {
		if err := tx.SaveRegressionRun(ctx, run); err != nil {
			return err
		}
		return audit(ctx, tx, "testfirst", tk.ID, "regressions.completed", map[string]any{"grade": g.ID, "head_sha": g.HeadSHA,
			"verdict": rep.Verdict, "regressed": len(rep.Regressed), "flaky": len(rep.Flaky), "base_passed": rep.Base.Passed})
	}); err != nil {
		return err
	}
	log.InfoContext(ctx, "regression run", "verdict", rep.Verdict, "regressed", len(rep.Regressed), "flaky", len(rep.Flaky))
	return w.update(context.WithoutCancel(ctx), gi, repo, run.CheckRunID, pipeline.RegressionsCheckRun(g.HeadSHA, g.ID, rep, details))
}

// regress runs the regression run of g under the repository's settings
// of the default branch, as its grade was.
func (w *RegressionsWorker) regress(ctx context.Context, gi *github.Installation, repo db.Repository, tk db.Ticket, g db.Grade, labels map[string]string) (*report.Regressions, error) {
	fc := pipeline.FetchConfig(ctx, gi, repo.Owner, repo.Name, repo.DefaultBranch)
	switch {
	case fc.LoadError != nil:
		return nil, retryOrCancel(fc.LoadError)
	case fc.ParseError != nil:
		return nil, river.JobCancel(fc.ParseError)
	}
	cfg := fc.Config
	base, err := downloadTree(ctx, gi, repo, tk.BaseSHA)
	if err != nil {
		return nil, retryOrCancel(err)
	}
	head, err := downloadTree(ctx, gi, repo, g.HeadSHA)
	if err != nil {
		return nil, retryOrCancel(err)
	}
	return w.grader.Regress(ctx, grader.RegressRequest{Repo: head, Base: base, Paths: cfg.Regressions.Paths, Budget: cfg.Regressions.Budget,
		Limits: sandboxLimits(cfg), Python: cfg.Python, Mirror: cfg.Network == report.NetworkMirror, Labels: labels})
}

// ensureCheckRun returns the run's check run, made in progress when it
// has none: a retried job that made one before it could record it finds
// it by its external id.
func (w *RegressionsWorker) ensureCheckRun(ctx context.Context, gi *github.Installation, repo db.Repository, g db.Grade, run db.RegressionRun, details string) (int64, error) {
	if run.CheckRunID > 0 {
		return run.CheckRunID, nil
	}
	runs, err := gi.CheckRunsFor(ctx, repo.Owner, repo.Name, g.HeadSHA, pipeline.RegressionsCheckRunName)
	if err != nil {
		return 0, retryOrCancel(err)
	}
	for _, r := range runs {
		if r.ExternalID == pipeline.RegressionsExternalID(g.ID) {
			return r.ID, nil
		}
	}
	id, err := gi.CreateCheckRun(ctx, repo.Owner, repo.Name, pipeline.RunningRegressionsCheckRun(g.HeadSHA, g.ID, details))
	if err != nil {
		return 0, retryOrCancel(err)
	}
	run.CheckRunID = id
	return id, w.save(ctx, run)
}

func (w *RegressionsWorker) save(ctx context.Context, run db.RegressionRun) error {
	return w.db.Tx(ctx, func(tx *db.Tx) error { return tx.SaveRegressionRun(ctx, run) })
}

func (w *RegressionsWorker) update(ctx context.Context, gi *github.Installation, repo db.Repository, id int64, cr checkrun.Run) error {
	if err := gi.UpdateCheckRun(ctx, repo.Owner, repo.Name, id, cr); err != nil {
		return retryOrCancel(err)
	}
	return nil
}
