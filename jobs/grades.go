package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/pipeline"
	"github.com/testfirst-app/testfirst/store"
)

// gradeQueue starts, re-runs and cancels grades. A grade is a database row
// and a River job, committed together, and one check run on the head.
type gradeQueue struct {
	db        *db.DB
	store     storeVersions
	publicURL string
	log       *slog.Logger
}

var (
	_ grading = (*gradeQueue)(nil)
	_ grading = notGrading{}
)

// notGrading is the grading of a service without the hidden-test store
// or the sandbox: it records and cancels, grades nothing, and says so on
// the check run of every pull request that closes a ticket and in every
// command's reply. why says what is missing.
type notGrading struct {
	*gradeQueue
	why string
}

func (n notGrading) gradeTicket(ctx context.Context, gi *github.Installation, repo db.Repository, tk db.Ticket, pr int, head string, _ bool) (string, error) {
	if !pipeline.Active(!tk.ClosedAt.IsZero(), !tk.WithdrawnAt.IsZero()) {
		return "", nil
	}
	var name string
	if err := n.db.Tx(ctx, func(tx *db.Tx) error {
		var err error
		name, err = checkRunName(ctx, tx, repo.ID, pr, tk.IssueNumber)
		return err
	}); err != nil {
		return "", err
	}
	cr := pipeline.NotConfiguredCheckRun(head, n.why)
	cr.Name, cr.ExternalID = name, notGradingID(tk.ID)
	return n.reply(), n.putRun(ctx, gi, repo, tk, head, cr)
}

func (n notGrading) reply() string { return "grading is not configured on this installation: " + n.why }

func (notGrading) resume(context.Context, *github.Installation, db.Repository, db.Ticket) error {
	return nil
}

func (notGrading) regrade(context.Context, installationClients, int64, int64, []db.Grade, string) error {
	return nil
}

func (n notGrading) regradeIssue(context.Context, *github.Installation, db.Repository, db.Ticket) (string, error) {
	return "Nothing was graded: " + n.reply() + ".", nil
}

func (n notGrading) regradePull(ctx context.Context, gi *github.Installation, repo db.Repository, pr db.PullRequest, tickets []db.Ticket) (string, error) {
	for _, t := range tickets {
		if _, err := n.gradeTicket(ctx, gi, repo, t, pr.Number, pr.HeadSHA, true); err != nil {
			return "", err
		}
	}
	return "Nothing was graded: " + n.reply() + ".", nil
}

func (notGrading) enqueueSync(context.Context, *db.Tx, int64) error { return nil }

// enqueueSync implements grading.
func (q *gradeQueue) enqueueSync(ctx context.Context, tx *db.Tx, ticket int64) error {
	return tx.InsertJob(ctx, SyncArgs{Ticket: ticket}, nil)
}

// resume implements grading: the open pull requests that close a ticket
// taken up again are graded again (their check runs said the ticket was
// withdrawn), or told they wait, when it is neither closed nor withdrawn.
func (q *gradeQueue) resume(ctx context.Context, gi *github.Installation, repo db.Repository, tk db.Ticket) error {
	if !pipeline.Active(!tk.ClosedAt.IsZero(), !tk.WithdrawnAt.IsZero()) {
		return nil
	}
	var prs []db.PullRequest
	if err := q.db.Tx(ctx, func(tx *db.Tx) error {
		var err error
		prs, err = tx.OpenPullsClosing(ctx, repo.ID, tk.IssueNumber)
		return err
	}); err != nil {
		return err
	}
	for _, pr := range prs {
		if _, err := q.gradeTicket(ctx, gi, repo, tk, pr.Number, pr.HeadSHA, true); err != nil {
			return err
		}
	}
	return nil
}

// regradeIssue implements grading: every open pull request that closes
// the ticket is graded again.
func (q *gradeQueue) regradeIssue(ctx context.Context, gi *github.Installation, repo db.Repository, tk db.Ticket) (string, error) {
	v, err := approvedVersion(ctx, q.store, storeTicket(repo, tk.IssueNumber))
	if err != nil {
		return "", err
	}
	if v == nil {
		var newest *pipeline.VersionStatus
		if err := q.db.Tx(ctx, func(tx *db.Tx) error {
			var err error
			newest, err = newestStatus(ctx, tx, tk.ID)
			return err
		}); err != nil {
			return "", err
		}
		return fmt.Sprintf("Nothing was graded: #%d has no approved hidden tests (%s). Its open pull requests are graded as soon as a version is approved.",
			tk.IssueNumber, pipeline.WaitingFor(newest)), nil
	}
	n, err := q.gradeOpenPulls(ctx, gi, repo, tk, *v, true)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Grading %d open pull request(s) again against hidden tests v%d.", n, v.Number), nil
}

// regradePull implements grading: the pull request's head is graded again
// against every ticket it closes.
// A ticket whose tests are not approved is named with what it waits for:
// the reply never says a head is graded when it is not.
func (q *gradeQueue) regradePull(ctx context.Context, gi *github.Installation, repo db.Repository, pr db.PullRequest, tickets []db.Ticket) (string, error) {
	var graded, waiting []string
	for _, t := range tickets {
		why, err := q.gradeTicket(ctx, gi, repo, t, pr.Number, pr.HeadSHA, true)
		if err != nil {
			return "", err
		}
		if why == "" {
			graded = append(graded, fmt.Sprintf("#%d", t.IssueNumber))
		} else {
			waiting = append(waiting, fmt.Sprintf("#%d (%s)", t.IssueNumber, why))
		}
	}
	var b strings.Builder
	if len(graded) > 0 {
		fmt.Fprintf(&b, "Grading `%.12s` again against the approved hidden tests of %s.", pr.HeadSHA, strings.Join(graded, ", "))
	}
	if len(waiting) > 0 {
		if b.Len() > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "Not graded now: %s has no approved hidden tests yet; `%.12s` is graded as soon as a version is approved.",
			strings.Join(waiting, ", "), pr.HeadSHA)
	}
	return b.String(), nil
}

// regrade implements grading: the heads of gs are graded again, each once
// per (ticket, pull request), against the ticket's approved tests as they
// are now. A head SHA can be shared by forks: only grades of repoID's
// tickets are made again.
func (q *gradeQueue) regrade(ctx context.Context, gh installationClients, installation, repoID int64, gs []db.Grade, by string) error {
	gi, err := gh.Installation(installation)
	if err != nil {
		return err
	}
	type key struct {
		ticket int64
		pr     int
	}
	seen := map[key]bool{}
	for _, g := range gs {
		k := key{g.TicketID, g.PRNumber}
		if seen[k] {
			continue
		}
		seen[k] = true
		var (
			tk   db.Ticket
			repo db.Repository
		)
		if err := q.db.Tx(ctx, func(tx *db.Tx) error {
			var err error
			if tk, err = tx.Ticket(ctx, g.TicketID); err != nil {
				return err
			}
			if repo, err = tx.Repository(ctx, tk.RepositoryID); err != nil || repo.ID != repoID {
				return err
			}
			return audit(ctx, tx, by, tk.ID, "grade.rerequested", map[string]any{"grade": g.ID, "head_sha": g.HeadSHA})
		}); err != nil {
			return err
		}
		if repo.ID != repoID {
			continue
		}
		if _, err := q.gradeTicket(ctx, gi, repo, tk, g.PRNumber, g.HeadSHA, true); err != nil {
			return err
		}
	}
	return nil
}

// gradeTicket grades head of pull request pr against the ticket's approved
// version, when the ticket is active and has one. force grades again a
// head graded already; otherwise a redelivered event changes nothing.
// Without approved tests the head gets the ticket's waiting check run at
// once, and the returned text says what it waits for.
func (q *gradeQueue) gradeTicket(ctx context.Context, gi *github.Installation, repo db.Repository, tk db.Ticket, pr int, head string, force bool) (string, error) {
	if !tk.WithdrawnAt.IsZero() {
		return q.withdrawn(ctx, gi, repo, tk, pr, head)
	}
	if !pipeline.Active(!tk.ClosedAt.IsZero(), false) {
		return "", nil
	}
	v, err := approvedVersion(ctx, q.store, storeTicket(repo, tk.IssueNumber))
	if err != nil {
		return "", err
	}
	if v == nil {
		return q.wait(ctx, gi, repo, tk, pr, head)
	}
	return "", q.grade(ctx, gi, repo, tk, pr, head, *v, force)
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
			VersionNumber: v.Number, InstallationID: repo.InstallationID, State: pipeline.GradeQueued})
		if err != nil {
			return err
		}
		if !created {
			if g.State.Unfinished() || !force {
				return nil // being graded, or graded: a redelivery does not grade twice
			}
			// What this attempt said stays on the grade's page.
			if err := tx.KeepAttempt(ctx, g.ID); err != nil {
				return err
			}
			g = db.Grade{ID: g.ID, TicketID: g.TicketID, PRNumber: pr, HeadSHA: g.HeadSHA, Digest: g.Digest, CheckRunID: g.CheckRunID,
				VersionNumber: g.VersionNumber, InstallationID: g.InstallationID, State: pipeline.GradeQueued}
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
	cr, err := q.queuedRun(ctx, g)
	if err != nil {
		return err
	}
	_, err = q.ensureCheckRun(ctx, gi, repo, g, cr, pipeline.GradeQueued)
	return err
}

// maxQueueRefresh bounds how many queued check runs a starting grade
// updates with their new place in the queue.
const maxQueueRefresh = 20

// cancel marks grades cancelled and completes their check runs saying why.
// A running grade's job sees the state and stops its sandbox.
func (q *gradeQueue) cancel(ctx context.Context, gi *github.Installation, repo db.Repository, gs []db.Grade, why string) error {
	if len(gs) == 0 {
		return nil
	}
	var cancelled []db.Grade
	if err := q.db.Tx(ctx, func(tx *db.Tx) error {
		cancelled = nil // the transaction may run again (db.Tx)
		for _, g := range gs {
			cur, err := tx.Grade(ctx, g.ID)
			if err != nil {
				return err
			}
			if !cur.State.Unfinished() {
				continue
			}
			cur.State, cur.FinishedAt = pipeline.GradeCancelled, time.Now()
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
		errs = append(errs, q.completeCheckRuns(ctx, gi, repo, g, pipeline.CancelledCheckRun(why)))
	}
	return errors.Join(errs...)
}

// cancelTicket cancels the ticket's unfinished grades against any digest
// but keep ("" cancels them all).
func (q *gradeQueue) cancelTicket(ctx context.Context, gi *github.Installation, repo db.Repository, tk db.Ticket, keep, why string) error {
	var gs []db.Grade
	if err := q.db.Tx(ctx, func(tx *db.Tx) error {
		gs = nil // the transaction may run again (db.Tx)
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
