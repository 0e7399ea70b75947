package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/testfirst-app/testfirst/checkrun"
	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/pipeline"
)

// finishCheckRuns completes the check runs of a grade that is recorded
// completed but that GitHub still shows in progress: the attempt that
// recorded it could not say so (GitHub refused the update through every
// try), and River ran the job again. The run says what the recorded grade
// says: its report, or that it could not be made.
func (w *GradeWorker) finishCheckRuns(ctx context.Context, log *slog.Logger, gi *github.Installation, g db.Grade, tk db.Ticket, repo db.Repository) error {
	runs, err := gi.CheckRunsFor(ctx, repo.Owner, repo.Name, g.HeadSHA, "")
	if err != nil {
		return retryOrCancel(err)
	}
	open := false
	for _, r := range runs {
		if (r.ID == g.CheckRunID || r.ExternalID == strconv.FormatInt(g.ID, 10)) && r.Status != checkrun.StatusCompleted {
			open = true
		}
	}
	if !open {
		return nil // a job that ran twice
	}
	var report []byte
	if err := w.db.Tx(ctx, func(tx *db.Tx) error {
		report, err = tx.GradeReport(ctx, g.ID)
		return err
	}); err != nil {
		return err
	}
	cr := pipeline.FailedCheckRun("The grade could not be completed; the grade page has what is known.", w.grades.detailsURL(g.ID))
	if len(report) > 0 {
		graded, err := pipeline.ParseReport(report)
		if err != nil {
			return fmt.Errorf("grade %d: recorded report: %w", g.ID, err)
		}
		content, v, err := w.openApproved(ctx, repo, tk, g)
		if err != nil {
			return fmt.Errorf("grade %d: open the approved tests for the check run: %w", g.ID, err)
		}
		warnings, _, err := gradeContext(ctx, w.db, tk.ID, g.HeadSHA)
		if err != nil {
			return err
		}
		// The refusal of an unproven uid split holds here as in the grade.
		fc := pipeline.FetchConfig(ctx, gi, repo.Owner, repo.Name, repo.DefaultBranch)
		switch {
		case fc.LoadError != nil:
			return retryOrCancel(fc.LoadError)
		case fc.ParseError != nil:
			cr = pipeline.FailedCheckRun(pipeline.ConfigErrorSummary(fc.ParseError), w.grades.detailsURL(g.ID))
		default:
			cr, _ = w.gradedCheckRun(g, tk, repo, graded, v.Number, content.Criteria, warnings, w.uidSplitRequiredBy(fc.Config))
		}
	}
	if err := w.grades.completeCheckRuns(ctx, gi, repo, g, cr); err != nil {
		return err
	}
	log.InfoContext(ctx, "check run completed after a failed update", "verdict", g.Verdict)
	return nil
}
