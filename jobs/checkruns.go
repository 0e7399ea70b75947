package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/testfirst-app/testfirst/checkrun"
	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/pipeline"
	"github.com/testfirst-app/testfirst/report"
)

// This file owns the whole life of a check run; the jobs that grade, sync
// and handle pull requests call it and never speak to GitHub's check runs
// themselves.
//
// A pull request's check run for a ticket is, in turn: waiting (no
// approved tests: queued, external id waitingID; wait, refreshWaiting),
// a grade's (external id the grade's id: created or adopted by
// ensureCheckRun, queued with its place by queuedRun and refreshQueue, in
// progress by phase, completed by completeCheckRuns with gradedCheckRun's
// verdict, and completed again by finishCheckRuns when River retries a
// grade whose completion GitHub refused), and, once its tests are replaced
// or the ticket withdrawn, completed again as superseded or withdrawn
// (restate, supersede, withdraw); rename keeps the names right as a pull
// request's tickets change. A head never lacks the check run of a ticket
// it closes.

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

// putRun updates the check run on head whose external id is cr's, else
// takes over the ticket's earlier run there (see earlierRun), else creates
// it.
func (q *gradeQueue) putRun(ctx context.Context, gi *github.Installation, repo db.Repository, tk db.Ticket, head string, cr checkrun.Run) error {
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
	id, from, err := q.earlierRun(ctx, tk.ID, head, cr.Name, 0, runs)
	if err != nil {
		return err
	}
	if id == 0 {
		_, err = gi.CreateCheckRun(ctx, repo.Owner, repo.Name, cr)
		return retryOrCancel(err)
	}
	if err := gi.UpdateCheckRun(ctx, repo.Owner, repo.Name, id, cr); err != nil {
		return retryOrCancel(err)
	}
	return q.leaveRun(ctx, from)
}

// earlierRun finds, among runs on head, the ticket's earlier check run of
// that name that a new one takes over: its waiting run, or the completed
// run of one of its finished grades other than except. A ticket has one
// check run per head, so a superseded, withdrawn or cancelled result never
// stays beside the new one, and its Regrade button goes with it. A run
// still in progress is never taken over: its grade may yet write to it.
// from is the grade whose run it was (0 for the waiting run).
func (q *gradeQueue) earlierRun(ctx context.Context, tk int64, head, name string, except int64, runs []github.CheckRunRef) (id, from int64, err error) {
	finished := map[string]int64{}
	if err := q.db.Tx(ctx, func(tx *db.Tx) error {
		gs, err := tx.GradesOfHead(ctx, head)
		for _, g := range gs {
			if g.TicketID == tk && g.ID != except && !g.State.Unfinished() {
				finished[strconv.FormatInt(g.ID, 10)] = g.ID
			}
		}
		return err
	}); err != nil {
		return 0, 0, err
	}
	for _, r := range runs {
		if r.Name != name {
			continue
		}
		if r.ExternalID == waitingID(tk) {
			return r.ID, 0, nil
		}
		if g, ok := finished[r.ExternalID]; ok && r.Status == checkrun.StatusCompleted {
			id, from = r.ID, g
		}
	}
	return id, from, nil
}

// runTaken reports whether check run id on head, listed with external id
// ext, is now held by a grade of ticket tk other than the one ext names: a
// takeover (earlierRun) that came after the list.
func (q *gradeQueue) runTaken(ctx context.Context, tk int64, head string, id int64, ext string) (bool, error) {
	var taken bool
	err := q.db.Tx(ctx, func(tx *db.Tx) error {
		gs, err := tx.GradesOfHead(ctx, head)
		for _, g := range gs {
			if g.TicketID == tk && g.CheckRunID == id && strconv.FormatInt(g.ID, 10) != ext {
				taken = true
			}
		}
		return err
	})
	return taken, err
}

// leaveRun records that grade g's check run is no longer its own: another
// took it over, and nothing done for g may change it again.
func (q *gradeQueue) leaveRun(ctx context.Context, g int64) error {
	if g == 0 {
		return nil
	}
	return q.db.Tx(ctx, func(tx *db.Tx) error { return tx.SetCheckRun(ctx, g, 0) })
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
	return pipeline.WaitingFor(newest), q.putRun(ctx, gi, repo, tk, head, cr)
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
	cr := pipeline.WithdrawnCheckRun(tk.IssueNumber, tk.Label, "not graded yet", "", withdrawnConclusion(ctx, gi, repo))
	cr.Name, cr.ExternalID = name, waitingID(tk.ID)
	return "the " + tk.Label + " label was removed", q.putRun(ctx, gi, repo, tk, head, cr)
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
		targets = nil // the transaction may run again (db.Tx)
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
			// A newer grade may have taken the run over since the list:
			// it is that grade's to write now.
			if held, err := q.runTaken(ctx, tk.ID, t.head, r.ID, r.ExternalID); err != nil || held {
				if err != nil {
					errs = append(errs, err)
				}
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
// pull requests, once by removed its label.
func (q *gradeQueue) withdraw(ctx context.Context, gi *github.Installation, repo db.Repository, tk db.Ticket, by string) error {
	conclusion := withdrawnConclusion(ctx, gi, repo)
	return q.restate(ctx, gi, repo, tk, func(g *db.Grade, was string) (checkrun.Run, bool) {
		if g == nil {
			was = "not graded yet"
		}
		return pipeline.WithdrawnCheckRun(tk.IssueNumber, tk.Label, was, by, conclusion), true
	})
}

// withdrawnConclusion is the repository's withdrawn_check; when its config
// cannot be read, the default, which keeps the check blocking.
func withdrawnConclusion(ctx context.Context, gi *github.Installation, repo db.Repository) string {
	fc := pipeline.FetchConfig(ctx, gi, repo.Owner, repo.Name, repo.DefaultBranch)
	if fc.LoadError != nil || fc.ParseError != nil {
		return pipeline.DefaultRepoConfig().WithdrawnCheck
	}
	return fc.Config.WithdrawnCheck
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

// queuedRun is the check run of queued grade g, with its place in the
// sandbox queue as River takes it: by priority (an installation's first
// waiting grade, then its second, …, from the fourth on together; see
// grade), then in order of recording; and the grades running.
func (q *gradeQueue) queuedRun(ctx context.Context, g db.Grade) (checkrun.Run, error) {
	ahead, running := 0, 0
	err := q.db.Tx(ctx, func(tx *db.Tx) error {
		ahead, running = 0, 0 // the transaction may run again (db.Tx)
		gs, err := tx.UnfinishedGradesAll(ctx)
		type place struct{ rank, id int64 }
		places := map[int64]place{}
		perInstallation := map[int64]int64{}
		for _, o := range gs { // oldest first
			if o.State == pipeline.GradeRunning {
				running++
				continue
			}
			perInstallation[o.InstallationID]++
			places[o.ID] = place{min(perInstallation[o.InstallationID], 4), o.ID}
		}
		me, ok := places[g.ID]
		for id, p := range places {
			if ok && id != g.ID && (p.rank < me.rank || p.rank == me.rank && p.id < me.id) {
				ahead++
			}
		}
		return err
	})
	return pipeline.QueuedCheckRun(g.HeadSHA, g.VersionNumber, ahead, running, q.detailsURL(g.ID)), err
}

// refreshQueue tells the first queued grades, after one started, their
// new place in the queue. A failure only leaves a place stale.
func (q *gradeQueue) refreshQueue(ctx context.Context, gh installationClients) {
	var (
		gs    []db.Grade
		repos = map[int64]db.Repository{}
	)
	if err := q.db.Tx(ctx, func(tx *db.Tx) error {
		gs = nil // the transaction may run again (db.Tx)
		all, err := tx.UnfinishedGradesAll(ctx)
		if err != nil {
			return err
		}
		for _, g := range all {
			if g.State != pipeline.GradeQueued || g.CheckRunID == 0 || len(gs) == maxQueueRefresh {
				continue
			}
			tk, err := tx.Ticket(ctx, g.TicketID)
			if err != nil {
				return err
			}
			if repos[g.ID], err = tx.Repository(ctx, tk.RepositoryID); err != nil {
				return err
			}
			gs = append(gs, g)
		}
		return nil
	}); err != nil {
		q.log.WarnContext(ctx, "queue refresh", "err", err)
		return
	}
	for _, g := range gs {
		gi, err := gh.Installation(repos[g.ID].InstallationID)
		if err == nil {
			var cr checkrun.Run
			if cr, err = q.queuedRun(ctx, g); err == nil {
				_, err = q.ensureCheckRun(ctx, gi, repos[g.ID], g, cr, pipeline.GradeQueued)
			}
		}
		if err != nil {
			q.log.WarnContext(ctx, "queue refresh", "grade", g.ID, "err", err)
		}
	}
}

// phase tells grade g's check run what the running grade is doing.
func (q *gradeQueue) phase(ctx context.Context, gi *github.Installation, repo db.Repository, g db.Grade, p pipeline.GradePhase) error {
	_, err := q.ensureCheckRun(ctx, gi, repo, g, pipeline.RunningCheckRun(g.HeadSHA, g.VersionNumber, p, q.detailsURL(g.ID)), pipeline.GradeRunning)
	return err
}

// ensureCheckRun makes grade g's check run say cr and returns its id: the
// run it has, or the ticket's waiting run on the head (adopted), or one
// made now. Of the delivery job and the grade job, which may both get here
// at once on different replicas, one claims the creation in the database;
// the other waits for its id. A claim left by a crash is taken over after
// checkRunClaimWait, adopting the run the crashed process made if it got
// that far (found by external id). An existing run is changed only while
// the grade is in state while, so that a late "queued" never hides "in
// progress" and a late phase never reopens a cancelled run.
func (q *gradeQueue) ensureCheckRun(ctx context.Context, gi *github.Installation, repo db.Repository, g db.Grade, cr checkrun.Run, while pipeline.GradeState) (int64, error) {
	cr.ExternalID = strconv.FormatInt(g.ID, 10)
	var err error
	if cr.Name, err = q.nameOf(ctx, repo, g); err != nil {
		return 0, err
	}
	id, claimed, state, err := q.checkRunOrClaim(ctx, g.ID, while)
	if err != nil {
		return 0, err
	}
	if id == 0 && !claimed && state != while {
		// Cancelled or finished without a run of its own (another grade
		// took its run over): a late phase opens none.
		return 0, nil
	}
	if id > 0 {
		if state != while {
			return id, nil
		}
		if err := gi.UpdateCheckRun(ctx, repo.Owner, repo.Name, id, cr); err != nil {
			return 0, retryOrCancel(err)
		}
		return id, nil
	}
	runs, err := gi.CheckRunsFor(ctx, repo.Owner, repo.Name, g.HeadSHA, "")
	if err != nil {
		return 0, retryOrCancel(err)
	}
	for _, r := range runs {
		// A claim older than the wait: its holder died. Adopt what it
		// made, if anything.
		if !claimed && r.ExternalID == cr.ExternalID {
			id = r.ID
			break
		}
	}
	var from int64
	if id == 0 {
		if id, from, err = q.earlierRun(ctx, g.TicketID, g.HeadSHA, cr.Name, g.ID, runs); err != nil {
			return 0, err
		}
	}
	if id != 0 {
		if err := gi.UpdateCheckRun(ctx, repo.Owner, repo.Name, id, cr); err != nil {
			return 0, retryOrCancel(err)
		}
	} else if id, err = gi.CreateCheckRun(ctx, repo.Owner, repo.Name, cr); err != nil {
		return 0, retryOrCancel(err)
	}
	return id, q.db.Tx(ctx, func(tx *db.Tx) error {
		if from != 0 {
			if err := tx.SetCheckRun(ctx, from, 0); err != nil {
				return err
			}
		}
		return tx.SetCheckRun(ctx, g.ID, id)
	})
}

// nameOf is the name of grade g's check run.
func (q *gradeQueue) nameOf(ctx context.Context, repo db.Repository, g db.Grade) (string, error) {
	var name string
	err := q.db.Tx(ctx, func(tx *db.Tx) error {
		tk, err := tx.Ticket(ctx, g.TicketID)
		if err != nil {
			return err
		}
		name, err = checkRunName(ctx, tx, repo.ID, g.PRNumber, tk.IssueNumber)
		return err
	})
	return name, err
}

// checkRunClaimWait is how long a grade waits for another process's claim
// on its check run before taking it for dead.
const checkRunClaimWait = 15 * time.Second

// checkRunOrClaim returns the grade's check run id when it has one, or
// claims its creation while the grade is in state while; after
// checkRunClaimWait of another's claim it returns neither, for the caller
// to take over. A grade in another state without a run claims nothing.
func (q *gradeQueue) checkRunOrClaim(ctx context.Context, grade int64, while pipeline.GradeState) (id int64, claimed bool, state pipeline.GradeState, err error) {
	deadline := time.Now().Add(checkRunClaimWait)
	for {
		err = q.db.Tx(ctx, func(tx *db.Tx) error {
			g, err := tx.Grade(ctx, grade)
			state = g.State
			if err != nil || g.CheckRunID > 0 {
				id = g.CheckRunID
				return err
			}
			if state != while {
				return nil // nothing to claim a run for
			}
			claimed, err = tx.ClaimCheckRun(ctx, grade)
			return err
		})
		if err != nil || id > 0 || claimed || state != while || time.Now().After(deadline) {
			return id, claimed, state, err
		}
		select {
		case <-ctx.Done():
			return 0, false, state, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// completeCheckRuns completes grade g's check run, and any other run on the
// head carrying its external id (created by a racing attempt), with cr: no
// run of a grade is left in progress.
func (q *gradeQueue) completeCheckRuns(ctx context.Context, gi *github.Installation, repo db.Repository, g db.Grade, cr checkrun.Run) error {
	var err error
	if cr.Name, err = q.nameOf(ctx, repo, g); err != nil {
		return err
	}
	ids := []int64{}
	if g.CheckRunID > 0 {
		ids = append(ids, g.CheckRunID)
	}
	runs, err := gi.CheckRunsFor(ctx, repo.Owner, repo.Name, g.HeadSHA, "")
	if err != nil {
		return retryOrCancel(err)
	}
	for _, r := range runs {
		if r.ExternalID == strconv.FormatInt(g.ID, 10) && r.ID != g.CheckRunID && r.Status != checkrun.StatusCompleted {
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

func (q *gradeQueue) detailsURL(grade int64) string {
	return strings.TrimRight(q.publicURL, "/") + pipeline.GradePath(grade)
}

// gradedCheckRun is the completed check run of grade g's report: its
// verdict, with the ticket's agent warnings, or its refusal when requiredBy
// requires a uid split the report does not prove; refusedBy is requiredBy
// then. The grade and the retry that completes its run after a failed
// update post the same.
func (w *GradeWorker) gradedCheckRun(g db.Grade, tk db.Ticket, repo db.Repository, graded *report.Report, version int, criteria map[string][]string, warnings []string, approval *pipeline.ApprovalFacts, requiredBy string) (cr checkrun.Run, refusedBy string) {
	done := pipeline.Graded{Report: graded, Version: version, Digest: g.Digest, Criteria: criteria, IssueBody: tk.Body, Approval: approval,
		DetailsURL: w.grades.detailsURL(g.ID), Owner: repo.Owner, Repo: repo.Name, Issue: tk.IssueNumber, Warnings: warnings}
	if refused, ok := pipeline.RefusedCheckRun(g.HeadSHA, done, requiredBy); ok {
		return refused, requiredBy
	}
	return pipeline.CompletedCheckRun(g.HeadSHA, done), ""
}

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
			approval, err := approvalFacts(ctx, w.db, tk.ID, v.Number)
			if err != nil {
				return err
			}
			cr, _ = w.gradedCheckRun(g, tk, repo, graded, v.Number, content.Criteria, warnings, approval, w.uidSplitRequiredBy(fc.Config))
		}
	}
	if err := w.grades.completeCheckRuns(ctx, gi, repo, g, cr); err != nil {
		return err
	}
	log.InfoContext(ctx, "check run completed after a failed update", "verdict", g.Verdict)
	return nil
}

// approvalFacts reads how version number of the ticket was signed and what
// its base check measured of its tests, for the check run's reviewers. A
// version the database does not hold (a grade from the command line) has
// none.
func approvalFacts(ctx context.Context, d *db.DB, ticket int64, number int) (*pipeline.ApprovalFacts, error) {
	var a *pipeline.ApprovalFacts
	err := d.Tx(ctx, func(tx *db.Tx) error {
		row, err := tx.Version(ctx, ticket, number)
		if errors.Is(err, db.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		sigs, err := tx.Approvals(ctx, row.ID)
		if err != nil {
			return err
		}
		var signers []pipeline.SignerFact
		for _, s := range sigs {
			signers = append(signers, pipeline.SignerFact{Login: s.ApprovedBy, ReviewSeconds: s.ReviewSeconds, Fast: s.Fast})
		}
		check, err := pipeline.ParseCheck(row.Check)
		if err != nil {
			check = nil // the signatures alone
		}
		a = pipeline.NewApprovalFacts(signers, check)
		return nil
	})
	return a, err
}
