package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/testfirst-app/testfirst/app/db"
	"github.com/testfirst-app/testfirst/app/pipeline"
	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/grader/store"
)

// QueueSandbox is the job queue of everything that runs the sealed
// sandbox: grades and base checks. It has its own workers, so deliveries
// and syncs never wait behind a grade.
const QueueSandbox = "sandbox"

// gradeMaxAttempts: River retries an engine or GitHub failure a few
// times, then the check run says the grade failed.
const gradeMaxAttempts = 5

// sandboxJobTimeout bounds a grade or base check job, given how long a job
// may run before another replica takes it for lost: a little less, so the
// job ends itself first. River rescues a job only once its own timeout has
// passed too, so this is also how soon a crashed replica's grade resumes.
func sandboxJobTimeout(rescueAfter time.Duration) time.Duration {
	if rescueAfter <= 0 {
		rescueAfter = DefaultJobRescueAfter
	}
	return rescueAfter * 8 / 9
}

// gradeQueue starts, re-runs and cancels grades. A grade is a database row
// and a River job, committed together, and one check run on the head.
type gradeQueue struct {
	db        *db.DB
	store     storeVersions
	publicURL string
	log       *slog.Logger
}

// approvedVersion returns the ticket's approved version, if any: the
// newest version, when it is approved.
func approvedVersion(ctx context.Context, s storeVersions, t store.Ticket) (*store.Version, error) {
	vs, err := s.Versions(ctx, t)
	if err != nil || len(vs) == 0 {
		return nil, err
	}
	if v := vs[len(vs)-1]; v.State == store.StateApproved {
		return &v, nil
	}
	return nil, nil
}

// gradeTicket grades head of pull request pr against the ticket's approved
// version, when the ticket is active and has one. force grades again a
// head graded already; otherwise a redelivered event changes nothing.
func (q *gradeQueue) gradeTicket(ctx context.Context, gi *github.Installation, repo db.Repository, tk db.Ticket, pr int, head string, force bool) error {
	if !tk.ClosedAt.IsZero() || !tk.WithdrawnAt.IsZero() {
		return nil
	}
	st := store.Ticket{Installation: repo.InstallationID, Owner: repo.Owner, Repo: repo.Name, Issue: tk.IssueNumber}
	v, err := approvedVersion(ctx, q.store, st)
	if err != nil || v == nil {
		return err // no approved hidden tests yet: nothing to grade against
	}
	return q.grade(ctx, gi, repo, tk, pr, head, *v, force)
}

// gradeOpenPulls grades every open pull request that closes the ticket
// against version v (after an approval; force grades heads graded
// already, for /testfirst regrade) and returns how many there were.
func (q *gradeQueue) gradeOpenPulls(ctx context.Context, gi *github.Installation, repo db.Repository, tk db.Ticket, v store.Version, force bool) (int, error) {
	var prs []db.PullRequest
	if err := q.db.Tx(ctx, func(tx *db.Tx) error {
		var err error
		prs, err = tx.OpenPullsClosing(ctx, repo.ID, tk.IssueNumber)
		return err
	}); err != nil {
		return 0, err
	}
	for _, pr := range prs {
		if err := q.grade(ctx, gi, repo, tk, pr.Number, pr.HeadSHA, v, force); err != nil {
			return 0, err
		}
	}
	return len(prs), nil
}

// grade records a grade of head against v and its job in one transaction,
// then puts the grade's check run on the head in progress. The job's
// priority keeps installations fair: an installation's first waiting grade
// goes first, its second after every other installation's first, and so
// on (River has four priorities, so from the fourth on they share one).
func (q *gradeQueue) grade(ctx context.Context, gi *github.Installation, repo db.Repository, tk db.Ticket, pr int, head string, v store.Version, force bool) error {
	var (
		g        db.Grade
		enqueued bool
	)
	err := q.db.Tx(ctx, func(tx *db.Tx) error {
		var (
			created bool
			err     error
		)
		g, created, err = tx.CreateGrade(ctx, db.Grade{TicketID: tk.ID, PRNumber: pr, HeadSHA: head, Digest: v.Digest,
			VersionNumber: v.Number, InstallationID: repo.InstallationID, State: db.GradeQueued})
		if err != nil {
			return err
		}
		if !created {
			if g.State == db.GradeQueued || g.State == db.GradeRunning || !force {
				return nil // being graded, or graded: a redelivery does not grade twice
			}
			g = db.Grade{ID: g.ID, TicketID: g.TicketID, PRNumber: pr, HeadSHA: g.HeadSHA, Digest: g.Digest, CheckRunID: g.CheckRunID,
				VersionNumber: g.VersionNumber, InstallationID: g.InstallationID, State: db.GradeQueued}
		}
		waiting, err := tx.QueuedGrades(ctx, repo.InstallationID)
		if err != nil {
			return err
		}
		res, err := tx.InsertJobResult(ctx, GradeArgs{Grade: g.ID}, &river.InsertOpts{Queue: QueueSandbox, MaxAttempts: gradeMaxAttempts,
			Priority: min(max(waiting, 1), 4)})
		if err != nil {
			return err
		}
		g.JobID, enqueued = res.Job.ID, true
		if err := tx.UpdateGrade(ctx, g); err != nil {
			return err
		}
		return audit(ctx, tx, "testfirst", tk.ID, "grade.queued", map[string]any{"grade": g.ID, "pull_request": pr, "head_sha": head,
			"version": v.Number, "digest": v.Digest, "regrade": !created})
	})
	if err != nil || !enqueued {
		return err
	}
	q.log.InfoContext(ctx, "grade queued", "installation", repo.InstallationID, "repo", repo.Owner+"/"+repo.Name, "ticket", tk.ID,
		"grade", g.ID, "head_sha", head, "digest", v.Digest)
	_, err = q.ensureCheckRun(ctx, gi, repo, g, fmt.Sprintf("grading against hidden tests v%d", v.Number),
		"The sealed grader is running the approved hidden tests.")
	return err
}

// ensureCheckRun puts grade g's check run in progress and returns its id:
// the one it has, or one made now. Of the delivery job and the grade job,
// which may both get here at once on different replicas, one claims the
// creation in the database; the other waits for its id. A claim left by a
// crash is taken over after checkRunClaimWait, adopting the run the
// crashed process made if it got that far (found by external id).
func (q *gradeQueue) ensureCheckRun(ctx context.Context, gi *github.Installation, repo db.Repository, g db.Grade, title, summary string) (int64, error) {
	cr := github.CheckRun{Name: pipeline.CheckRunName, HeadSHA: g.HeadSHA, Status: github.StatusInProgress, ExternalID: strconv.FormatInt(g.ID, 10),
		Title: title, Summary: summary, DetailsURL: q.detailsURL(g.ID)}
	id, claimed, err := q.checkRunOrClaim(ctx, g.ID)
	if err != nil {
		return 0, err
	}
	if id > 0 {
		if err := gi.UpdateCheckRun(ctx, repo.Owner, repo.Name, id, cr); err != nil {
			return 0, retryOrCancel(err)
		}
		return id, nil
	}
	if !claimed {
		// A claim older than the wait: its holder died. Adopt what it
		// made, if anything.
		runs, err := gi.CheckRunsFor(ctx, repo.Owner, repo.Name, g.HeadSHA, pipeline.CheckRunName)
		if err != nil {
			return 0, retryOrCancel(err)
		}
		for _, r := range runs {
			if r.ExternalID == cr.ExternalID {
				id = r.ID
				break
			}
		}
	}
	if id != 0 {
		if err := gi.UpdateCheckRun(ctx, repo.Owner, repo.Name, id, cr); err != nil {
			return 0, retryOrCancel(err)
		}
	} else if id, err = gi.CreateCheckRun(ctx, repo.Owner, repo.Name, cr); err != nil {
		return 0, retryOrCancel(err)
	}
	return id, q.db.Tx(ctx, func(tx *db.Tx) error { return tx.SetCheckRun(ctx, g.ID, id) })
}

// checkRunClaimWait is how long a grade waits for another process's claim
// on its check run before taking it for dead.
const checkRunClaimWait = 15 * time.Second

// checkRunOrClaim returns the grade's check run id when it has one, or
// claims its creation; after checkRunClaimWait of another's claim it
// returns neither, for the caller to take over.
func (q *gradeQueue) checkRunOrClaim(ctx context.Context, grade int64) (id int64, claimed bool, err error) {
	deadline := time.Now().Add(checkRunClaimWait)
	for {
		err = q.db.Tx(ctx, func(tx *db.Tx) error {
			g, err := tx.Grade(ctx, grade)
			if err != nil || g.CheckRunID > 0 {
				id = g.CheckRunID
				return err
			}
			claimed, err = tx.ClaimCheckRun(ctx, grade)
			return err
		})
		if err != nil || id > 0 || claimed || time.Now().After(deadline) {
			return id, claimed, err
		}
		select {
		case <-ctx.Done():
			return 0, false, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// completeCheckRuns completes grade g's check run, and any other run on the
// head carrying its external id (created by a racing attempt), with cr: no
// run of a grade is left in progress.
func (q *gradeQueue) completeCheckRuns(ctx context.Context, gi *github.Installation, repo db.Repository, g db.Grade, cr github.CheckRun) error {
	ids := []int64{}
	if g.CheckRunID > 0 {
		ids = append(ids, g.CheckRunID)
	}
	runs, err := gi.CheckRunsFor(ctx, repo.Owner, repo.Name, g.HeadSHA, pipeline.CheckRunName)
	if err != nil {
		return retryOrCancel(err)
	}
	for _, r := range runs {
		if r.ExternalID == strconv.FormatInt(g.ID, 10) && r.ID != g.CheckRunID && r.Status != github.StatusCompleted {
			ids = append(ids, r.ID)
		}
	}
	cr.ExternalID = strconv.FormatInt(g.ID, 10)
	for _, id := range ids {
		if err := gi.UpdateCheckRun(ctx, repo.Owner, repo.Name, id, cr); err != nil {
			return retryOrCancel(err)
		}
	}
	return nil
}

// cancel marks grades cancelled and completes their check runs saying why.
// A running grade's job sees the state and stops its sandbox.
func (q *gradeQueue) cancel(ctx context.Context, gi *github.Installation, repo db.Repository, gs []db.Grade, why string) error {
	if len(gs) == 0 {
		return nil
	}
	var cancelled []db.Grade
	if err := q.db.Tx(ctx, func(tx *db.Tx) error {
		for _, g := range gs {
			cur, err := tx.Grade(ctx, g.ID)
			if err != nil {
				return err
			}
			if cur.State != db.GradeQueued && cur.State != db.GradeRunning {
				continue
			}
			cur.State, cur.FinishedAt = db.GradeCancelled, time.Now()
			if err := tx.UpdateGrade(ctx, cur); err != nil {
				return err
			}
			if err := audit(ctx, tx, "testfirst", cur.TicketID, "grade.cancelled", map[string]any{"grade": cur.ID, "head_sha": cur.HeadSHA, "why": why}); err != nil {
				return err
			}
			cancelled = append(cancelled, cur)
		}
		return nil
	}); err != nil {
		return err
	}
	var errs []error
	for _, g := range cancelled {
		q.log.InfoContext(ctx, "grade cancelled", "installation", repo.InstallationID, "repo", repo.Owner+"/"+repo.Name, "grade", g.ID, "why", why)
		errs = append(errs, q.completeCheckRuns(ctx, gi, repo, g, cancelledCheckRun(why)))
	}
	return errors.Join(errs...)
}

// cancelTicket cancels the ticket's unfinished grades against any digest
// but keep ("" cancels them all).
func (q *gradeQueue) cancelTicket(ctx context.Context, gi *github.Installation, repo db.Repository, tk db.Ticket, keep, why string) error {
	var gs []db.Grade
	if err := q.db.Tx(ctx, func(tx *db.Tx) error {
		all, err := tx.UnfinishedGrades(ctx, tk.ID)
		for _, g := range all {
			if keep == "" || g.Digest != keep {
				gs = append(gs, g)
			}
		}
		return err
	}); err != nil {
		return err
	}
	return q.cancel(ctx, gi, repo, gs, why)
}

func (q *gradeQueue) detailsURL(grade int64) string {
	return strings.TrimRight(q.publicURL, "/") + pipeline.GradePath(grade)
}

// cancelledCheckRun is the check run of a grade that will not finish.
func cancelledCheckRun(why string) github.CheckRun {
	return github.CheckRun{Name: pipeline.CheckRunName, Status: github.StatusCompleted, Conclusion: github.ConclusionCancelled,
		Title: "grade cancelled", Summary: why}
}
