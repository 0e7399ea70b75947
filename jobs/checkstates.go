package jobs

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/testfirst-app/testfirst/checkrun"
	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/pipeline"
)

// A pull request's check run for a ticket is, in turn: waiting (no
// approved tests: queued, external id waitingID), a grade's (external id
// the grade's id: queued, in progress, completed), and, once its tests are
// replaced or the ticket withdrawn, completed again as superseded or
// withdrawn. A head never lacks the check run of a ticket it closes.

// waitingID is the external id of a ticket's waiting check run, which the
// ticket's first grade of the head adopts.
func waitingID(ticket int64) string { return "wait-" + strconv.FormatInt(ticket, 10) }

// notGradingID is the external id of the check run that says the
// installation cannot grade.
func notGradingID(ticket int64) string { return "off-" + strconv.FormatInt(ticket, 10) }

// checkRunName is the name of ticket issue's check run on pull request pr:
// per ticket when the pull request closes several.
func checkRunName(ctx context.Context, tx *db.Tx, repoID int64, pr, issue int) (string, error) {
	p, err := tx.PullRequest(ctx, repoID, pr)
	if errors.Is(err, db.ErrNotFound) {
		return pipeline.CheckRunName, nil
	}
	if err != nil {
		return "", err
	}
	tickets := 0
	for _, n := range p.Links {
		if _, err := tx.TicketByIssue(ctx, repoID, n); err == nil {
			tickets++
		} else if !errors.Is(err, db.ErrNotFound) {
			return "", err
		}
	}
	return pipeline.CheckRunNameFor(issue, tickets), nil
}

// newestStatus is the ticket's newest version as the pipeline sees it, nil
// for none.
func newestStatus(ctx context.Context, tx *db.Tx, ticket int64) (*pipeline.VersionStatus, error) {
	vs, err := tx.Versions(ctx, ticket)
	if err != nil || len(vs) == 0 {
		return nil, err
	}
	v := vs[len(vs)-1]
	check, err := pipeline.ParseCheck(v.Check)
	if err != nil {
		check = nil
	}
	return &pipeline.VersionStatus{Number: v.Number, State: v.State, Check: check, Announced: v.Announced}, nil
}

// putRun updates the check run on head whose external id is cr's, or
// creates it.
func putRun(ctx context.Context, gi *github.Installation, repo db.Repository, head string, cr checkrun.Run) error {
	runs, err := gi.CheckRunsFor(ctx, repo.Owner, repo.Name, head, "")
	if err != nil {
		return retryOrCancel(err)
	}
	cr.HeadSHA = head
	for _, r := range runs {
		if r.ExternalID == cr.ExternalID {
			return retryOrCancel(gi.UpdateCheckRun(ctx, repo.Owner, repo.Name, r.ID, cr))
		}
	}
	_, err = gi.CreateCheckRun(ctx, repo.Owner, repo.Name, cr)
	return retryOrCancel(err)
}

// wait puts the ticket's waiting check run on head of pull request pr and
// returns why the head is not graded.
func (q *gradeQueue) wait(ctx context.Context, gi *github.Installation, repo db.Repository, tk db.Ticket, pr int, head string) (string, error) {
	var (
		newest *pipeline.VersionStatus
		name   string
	)
	if err := q.db.Tx(ctx, func(tx *db.Tx) error {
		var err error
		if newest, err = newestStatus(ctx, tx, tk.ID); err != nil {
			return err
		}
		name, err = checkRunName(ctx, tx, repo.ID, pr, tk.IssueNumber)
		return err
	}); err != nil {
		return "", err
	}
	cr := pipeline.WaitingCheckRun(head, tk.IssueNumber, newest, q.cardURL(repo, tk, newest))
	cr.Name, cr.ExternalID = name, waitingID(tk.ID)
	return pipeline.WaitingFor(newest), putRun(ctx, gi, repo, head, cr)
}

// withdrawn puts on head of pull request pr the check run of a withdrawn
// ticket (neutral: it is not graded) and returns why.
func (q *gradeQueue) withdrawn(ctx context.Context, gi *github.Installation, repo db.Repository, tk db.Ticket, pr int, head string) (string, error) {
	var name string
	if err := q.db.Tx(ctx, func(tx *db.Tx) error {
		var err error
		name, err = checkRunName(ctx, tx, repo.ID, pr, tk.IssueNumber)
		return err
	}); err != nil {
		return "", err
	}
	cr := pipeline.WithdrawnCheckRun(tk.IssueNumber, tk.Label, "not graded yet")
	cr.Name, cr.ExternalID = name, waitingID(tk.ID)
	return "the " + tk.Label + " label was removed", putRun(ctx, gi, repo, head, cr)
}

// cardURL is the ticket's approval card: of its newest version, or the
// ticket's page when it has none.
func (q *gradeQueue) cardURL(repo db.Repository, tk db.Ticket, newest *pipeline.VersionStatus) string {
	base := strings.TrimRight(q.publicURL, "/")
	if newest == nil {
		return base + pipeline.TicketPath(repo.Owner, repo.Name, tk.IssueNumber)
	}
	return base + pipeline.CardPath(repo.Owner, repo.Name, tk.IssueNumber, newest.Number)
}

// restateRender says what one check run of the ticket on an open pull
// request's head says now: g is the completed grade it shows (nil for the
// waiting run) and was its title. ok false leaves it as it is.
type restateRender func(g *db.Grade, was string) (cr checkrun.Run, ok bool)

// restate completes again, at once, the check runs of the ticket's
// completed grades and its waiting runs on every open pull request that
// closes it, as render says. Unfinished grades are left to cancel.
func (q *gradeQueue) restate(ctx context.Context, gi *github.Installation, repo db.Repository, tk db.Ticket, render restateRender) error {
	type target struct {
		head, name string
		grades     map[string]db.Grade
	}
	var targets []target
	if err := q.db.Tx(ctx, func(tx *db.Tx) error {
		prs, err := tx.OpenPullsClosing(ctx, repo.ID, tk.IssueNumber)
		if err != nil {
			return err
		}
		for _, pr := range prs {
			t := target{head: pr.HeadSHA, grades: map[string]db.Grade{}}
			if t.name, err = checkRunName(ctx, tx, repo.ID, pr.Number, tk.IssueNumber); err != nil {
				return err
			}
			gs, err := tx.GradesOfHead(ctx, pr.HeadSHA)
			if err != nil {
				return err
			}
			for _, g := range gs {
				if g.TicketID == tk.ID && g.State == pipeline.GradeCompleted {
					t.grades[strconv.FormatInt(g.ID, 10)] = g
				}
			}
			targets = append(targets, t)
		}
		return nil
	}); err != nil {
		return err
	}
	var errs []error
	for _, t := range targets {
		runs, err := gi.CheckRunsFor(ctx, repo.Owner, repo.Name, t.head, "")
		if err != nil {
			errs = append(errs, retryOrCancel(err))
			continue
		}
		for _, r := range runs {
			var (
				cr checkrun.Run
				ok bool
			)
			if g, found := t.grades[r.ExternalID]; found && r.Status == checkrun.StatusCompleted {
				cr, ok = render(&g, r.Title)
			} else if r.ExternalID == waitingID(tk.ID) {
				cr, ok = render(nil, r.Title)
			}
			if !ok {
				continue
			}
			cr.Name, cr.HeadSHA, cr.ExternalID = t.name, t.head, r.ExternalID
			if err := gi.UpdateCheckRun(ctx, repo.Owner, repo.Name, r.ID, cr); err != nil {
				errs = append(errs, retryOrCancel(err))
			}
		}
	}
	return errors.Join(errs...)
}

// supersede completes again as superseded the check runs of grades
// against versions older than newest, when newest replaced an approved
// version, and refreshes the waiting runs.
func (q *gradeQueue) supersede(ctx context.Context, gi *github.Installation, repo db.Repository, tk db.Ticket, newest *pipeline.VersionStatus) error {
	return q.restate(ctx, gi, repo, tk, func(g *db.Grade, was string) (checkrun.Run, bool) {
		if g == nil {
			return pipeline.WaitingCheckRun("", tk.IssueNumber, newest, q.cardURL(repo, tk, newest)), true
		}
		if newest == nil || g.VersionNumber >= newest.Number {
			return checkrun.Run{}, false
		}
		cr := pipeline.SupersededCheckRun(g.VersionNumber, newest.Number, newest, was)
		cr.DetailsURL = q.detailsURL(g.ID)
		cr.Actions = []checkrun.Action{pipeline.RegradeAction}
		return cr, true
	})
}

// refreshWaiting says on the ticket's waiting check runs where its newest
// version stands now.
func (q *gradeQueue) refreshWaiting(ctx context.Context, gi *github.Installation, repo db.Repository, tk db.Ticket) error {
	var newest *pipeline.VersionStatus
	if err := q.db.Tx(ctx, func(tx *db.Tx) error {
		var err error
		newest, err = newestStatus(ctx, tx, tk.ID)
		return err
	}); err != nil {
		return err
	}
	return q.restate(ctx, gi, repo, tk, func(g *db.Grade, _ string) (checkrun.Run, bool) {
		if g != nil {
			return checkrun.Run{}, false
		}
		return pipeline.WaitingCheckRun("", tk.IssueNumber, newest, q.cardURL(repo, tk, newest)), true
	})
}

// withdraw completes again as withdrawn the ticket's check runs on its open
// pull requests, once its label is removed.
func (q *gradeQueue) withdraw(ctx context.Context, gi *github.Installation, repo db.Repository, tk db.Ticket) error {
	return q.restate(ctx, gi, repo, tk, func(g *db.Grade, was string) (checkrun.Run, bool) {
		if g == nil {
			was = "not graded yet"
		}
		return pipeline.WithdrawnCheckRun(tk.IssueNumber, tk.Label, was), true
	})
}

// rename gives the check runs on head of pull request pr the names they
// have now that its description links tickets: "testfirst" alone, or one
// "testfirst · #N" per ticket; a run keeps what it says. The waiting run
// of a ticket no longer linked is completed, saying so (its grades are
// cancelled by the pull request's event).
func (q *gradeQueue) rename(ctx context.Context, gi *github.Installation, repo db.Repository, pr int, head string, tickets []db.Ticket) error {
	runs, err := gi.CheckRunsFor(ctx, repo.Owner, repo.Name, head, "")
	if err != nil {
		return retryOrCancel(err)
	}
	names := map[string]string{} // external id → name
	unlinked := map[string]int{} // waiting run's external id → issue
	if err := q.db.Tx(ctx, func(tx *db.Tx) error {
		gs, err := tx.GradesOfHead(ctx, head)
		if err != nil {
			return err
		}
		linked := map[string]bool{}
		for _, tk := range tickets {
			name, err := checkRunName(ctx, tx, repo.ID, pr, tk.IssueNumber)
			if err != nil {
				return err
			}
			linked[waitingID(tk.ID)] = true
			names[waitingID(tk.ID)], names[notGradingID(tk.ID)] = name, name
			for _, g := range gs {
				if g.TicketID == tk.ID && g.PRNumber == pr {
					names[strconv.FormatInt(g.ID, 10)] = name
				}
			}
		}
		for _, r := range runs {
			id, ok := strings.CutPrefix(r.ExternalID, "wait-")
			if !ok || linked[r.ExternalID] || r.Status == checkrun.StatusCompleted {
				continue
			}
			n, err := strconv.ParseInt(id, 10, 64)
			if err != nil {
				continue
			}
			tk, err := tx.Ticket(ctx, n)
			if errors.Is(err, db.ErrNotFound) || err == nil && tk.RepositoryID != repo.ID {
				continue
			}
			if err != nil {
				return err
			}
			unlinked[r.ExternalID] = tk.IssueNumber
		}
		return nil
	}); err != nil {
		return err
	}
	for _, r := range runs {
		var cr checkrun.Run
		if issue, ok := unlinked[r.ExternalID]; ok {
			cr = pipeline.UnlinkedCheckRun(issue)
			cr.Name, cr.ExternalID = r.Name, r.ExternalID
		} else if name, ok := names[r.ExternalID]; ok && r.Name != name && pipeline.IsCheckRunName(r.Name) {
			cr = checkrun.Run{Name: name}
		} else {
			continue
		}
		if err := gi.UpdateCheckRun(ctx, repo.Owner, repo.Name, r.ID, cr); err != nil {
			return retryOrCancel(err)
		}
	}
	return nil
}
