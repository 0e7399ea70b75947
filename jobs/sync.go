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

// DefaultSyncInterval is how often every active ticket is brought in line
// with the store, so that tests pushed and decisions taken outside the
// service (testfirst tests push|approve|reject) are picked up without a
// restart.
const DefaultSyncInterval = 15 * time.Second

// SyncPeriodicJob syncs every active ticket every interval, and once when
// the River leader starts.
func SyncPeriodicJob(interval time.Duration) *river.PeriodicJob {
	return river.NewPeriodicJob(river.PeriodicInterval(interval), func() (river.JobArgs, *river.InsertOpts) {
		return SyncArgs{}, nil
	}, &river.PeriodicJobOpts{ID: "sync", RunOnStart: true})
}

// SyncWorker mirrors the store's versions and decisions into the database
// and acts on each change once: it starts the base check of a new version,
// announces it ready (or invalid), labels and announces an approval,
// cancels the grades an approval replaces and grades the open pull
// requests that close the ticket, announces rejections, and stops a ticket
// rejected too often.
type SyncWorker struct {
	river.WorkerDefaults[SyncArgs]
	db     *db.DB
	github installationClients
	store  storeVersions
	grades *gradeQueue
	// agents starts the writer's next round after a rejection and the
	// implementer after an approval; nil on a service without agents.
	agents    *agentQueue
	publicURL string
	log       *slog.Logger
}

// versionView is one version as the sync sees it: the store's (the source
// of truth), the database's mirror of it, and its status for the
// pipeline's transitions.
type versionView struct {
	v      store.Version
	dv     db.Version
	status pipeline.VersionStatus
}

// Work implements river.Worker.
func (w *SyncWorker) Work(ctx context.Context, job *river.Job[SyncArgs]) error {
	var tickets []db.Ticket
	err := w.db.Tx(ctx, func(tx *db.Tx) error {
		if job.Args.Ticket != 0 {
			tk, err := tx.Ticket(ctx, job.Args.Ticket)
			tickets = []db.Ticket{tk}
			return err
		}
		var err error
		tickets, err = tx.ActiveTickets(ctx)
		return err
	})
	if errors.Is(err, db.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	if job.Args.Ticket == 0 {
		errs = append(errs, w.sweepGrades(ctx))
	}
	for _, tk := range tickets {
		if err := w.syncTicket(ctx, tk); err != nil {
			w.log.ErrorContext(ctx, "sync failed", "ticket", tk.ID, "err", err)
			errs = append(errs, fmt.Errorf("sync ticket %d: %w", tk.ID, err))
		}
	}
	return errors.Join(errs...)
}

// sweepGrades closes the check runs of grades whose job ended without
// finishing them (its attempts ran out while GitHub or the database was
// down, or it was cancelled by hand): no check run stays in progress.
func (w *SyncWorker) sweepGrades(ctx context.Context) error {
	var lost []db.Grade
	if err := w.db.Tx(ctx, func(tx *db.Tx) error {
		lost = nil // the transaction may run again (db.Tx)
		gs, err := tx.UnfinishedGradesAll(ctx)
		if err != nil {
			return err
		}
		for _, g := range gs {
			if g.JobID == 0 {
				continue
			}
			finished, err := tx.JobFinished(ctx, g.JobID)
			if err != nil {
				return err
			}
			if finished {
				lost = append(lost, g)
			}
		}
		return nil
	}); err != nil {
		return err
	}
	var errs []error
	for _, g := range lost {
		var repo db.Repository
		if err := w.db.Tx(ctx, func(tx *db.Tx) error {
			tk, err := tx.Ticket(ctx, g.TicketID)
			if err != nil {
				return err
			}
			repo, err = tx.Repository(ctx, tk.RepositoryID)
			return err
		}); err != nil {
			errs = append(errs, err)
			continue
		}
		gi, err := w.github.Installation(repo.InstallationID)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		w.log.WarnContext(ctx, "grade lost its job", "grade", g.ID, "job", g.JobID)
		errs = append(errs, w.grades.cancel(ctx, gi, repo, []db.Grade{g}, "This grade's job ended without a result. Use Regrade to grade this commit again."))
	}
	return errors.Join(errs...)
}

// ticketView is one ticket with everything its sync needs.
type ticketView struct {
	tk   db.Ticket
	repo db.Repository
	st   store.Ticket
	gi   *github.Installation
	log  *slog.Logger
	// newest is the number of the ticket's newest version, 0 for none.
	newest int
}

func (w *SyncWorker) syncTicket(ctx context.Context, tk db.Ticket) error {
	var repo db.Repository
	if err := w.db.Tx(ctx, func(tx *db.Tx) error {
		var err error
		repo, err = tx.Repository(ctx, tk.RepositoryID)
		return err
	}); err != nil {
		return err
	}
	st := storeTicket(repo, tk.IssueNumber)
	vs, err := w.store.Versions(ctx, st)
	if err != nil {
		return err
	}
	gi, err := w.github.Installation(repo.InstallationID)
	if err != nil {
		return err
	}
	t := ticketView{tk: tk, repo: repo, st: st, gi: gi,
		log: w.log.With("installation", repo.InstallationID, "repo", repo.Owner+"/"+repo.Name, "ticket", tk.ID)}
	views, err := w.mirror(ctx, t, vs)
	if err != nil {
		return err
	}
	active := pipeline.Active(!tk.ClosedAt.IsZero(), !tk.WithdrawnAt.IsZero())
	if len(vs) > 0 {
		t.newest = vs[len(vs)-1].Number
	}
	rejection := false // a rejection was announced in this sync
	for i, vv := range views {
		to, err := w.announce(ctx, t, vv, i == len(views)-1, active)
		if err != nil {
			return retryOrCancel(err)
		}
		rejection = rejection || to == pipeline.AnnouncedRejected
	}
	return w.settle(ctx, t, views, active, rejection)
}

// mirror records every store version and decision in the database, with
// its audit event, and starts the base check of a new pending version.
func (w *SyncWorker) mirror(ctx context.Context, t ticketView, vs []store.Version) ([]versionView, error) {
	out := make([]versionView, len(vs))
	err := w.db.Tx(ctx, func(tx *db.Tx) error {
		for i, v := range vs {
			// Recorded pending first, so a decision taken before the
			// service saw the version is recorded as its own transition.
			dv, created, err := tx.RecordStoreVersion(ctx, t.tk.ID, v.Number, v.Digest, v.Author, v.Created)
			if err != nil {
				return err
			}
			if created {
				if err := audit(ctx, tx, v.Author, t.tk.ID, "version.pushed", map[string]any{"version": v.Number, "digest": v.Digest}); err != nil {
					return err
				}
			}
			if dv.State != pipeline.VersionState(v.State) {
				if err := w.mirrorDecision(ctx, tx, t, v, &dv); err != nil {
					return err
				}
			}
			if v.State == store.StatePending && dv.Check == nil && i == len(vs)-1 {
				if err := tx.InsertJob(ctx, VersionCheckArgs{Version: dv.ID}, nil); err != nil {
					return err
				}
			}
			check, err := pipeline.ParseCheck(dv.Check)
			if err != nil {
				return fmt.Errorf("version %d of %s: stored check: %w", v.Number, t.st, err)
			}
			status := pipeline.VersionStatus{Number: v.Number, State: dv.State, Check: check, Announced: dv.Announced}
			if dv.State == pipeline.VersionPending {
				// Signatures that wait for the one enforce still asks for.
				sigs, err := tx.Approvals(ctx, dv.ID)
				if err != nil {
					return err
				}
				for _, s := range sigs {
					status.Signers = append(status.Signers, s.ApprovedBy)
				}
			}
			out[i] = versionView{v: v, dv: dv, status: status}
		}
		return nil
	})
	return out, err
}

// mirrorDecision records a version's new state; an approval the card has
// not recorded already is recorded with its decision's author and time.
func (w *SyncWorker) mirrorDecision(ctx context.Context, tx *db.Tx, t ticketView, v store.Version, dv *db.Version) error {
	var reason, actor string
	if d := v.Decision; d != nil {
		reason, actor = d.Reason, d.By
	}
	if err := tx.SetVersionDecision(ctx, dv.ID, pipeline.VersionState(v.State), reason); err != nil {
		return err
	}
	if v.State == store.StateApproved && v.Decision != nil {
		as, err := tx.Approvals(ctx, dv.ID)
		if err != nil {
			return err
		}
		if len(as) == 0 {
			if _, err := tx.Approve(ctx, db.Approval{VersionID: dv.ID, ApprovedBy: v.Decision.By, ApprovedAt: v.Decision.At, Digest: v.Decision.Digest}); err != nil {
				return err
			}
		}
	}
	if actor == "" {
		actor = "testfirst"
	}
	dv.State, dv.RejectionReason = pipeline.VersionState(v.State), reason
	return audit(ctx, tx, actor, t.tk.ID, "version."+string(v.State), map[string]any{"version": v.Number, "digest": v.Digest})
}

// announce tells the issue about a version's state, once per transition
// (pipeline.NextAnnouncement), and does what the transition asks: an
// approval labels the issue, cancels grades against other versions and
// grades the open pull requests; a superseded approval is reopened.
func (w *SyncWorker) announce(ctx context.Context, t ticketView, vv versionView, newest, active bool) (pipeline.Announcement, error) {
	v, dv := vv.v, vv.dv
	to := pipeline.NextAnnouncement(vv.status, newest)
	var body string
	switch to {
	case pipeline.AnnouncedNone:
		return to, nil
	case pipeline.AnnouncedReady:
		check := vv.status.Check
		body = pipeline.ReadyComment(t.tk.Requester, v.Number, len(check.Tests), len(check.Base.GuardTests),
			strings.TrimSuffix(w.publicURL, "/")+pipeline.CardPath(t.repo.Owner, t.repo.Name, t.tk.IssueNumber, v.Number))
	case pipeline.AnnouncedInvalid:
		body = pipeline.InvalidComment(v.Number, *vv.status.Check)
	case pipeline.AnnouncedSignatureAsked:
		// Who can give the missing signature is named: GitHub's list of
		// those with write access, read now.
		gi, err := w.github.Installation(t.repo.InstallationID)
		if err != nil {
			return pipeline.AnnouncedNone, err
		}
		writers, err := gi.Collaborators(ctx, t.repo.Owner, t.repo.Name, "push")
		if err != nil {
			return pipeline.AnnouncedNone, retryOrCancel(err)
		}
		body = pipeline.SignatureAskedComment(t.tk.Requester, vv.status.Signers, v.Number,
			strings.TrimSuffix(w.publicURL, "/")+pipeline.CardPath(t.repo.Owner, t.repo.Name, t.tk.IssueNumber, v.Number), writers)
	case pipeline.AnnouncedRejected:
		body = pipeline.RejectedComment(v.Number, v.Author,
			strings.TrimSuffix(w.publicURL, "/")+pipeline.CardPath(t.repo.Owner, t.repo.Name, t.tk.IssueNumber, v.Number))
	}
	var claimed bool
	if err := w.db.Tx(ctx, func(tx *db.Tx) error {
		var err error
		if claimed, err = tx.ClaimAnnouncement(ctx, dv.ID, dv.Announced, to); err != nil || !claimed {
			return err
		}
		if to == pipeline.AnnouncedReady {
			return tx.SetVersionReady(ctx, dv.ID, time.Now())
		}
		return nil
	}); err != nil || !claimed {
		return pipeline.AnnouncedNone, err
	}
	err := w.act(ctx, t, vv, to, body, active)
	if err != nil {
		// Hand the announcement back, so the retry makes it.
		err = errors.Join(err, w.db.Tx(ctx, func(tx *db.Tx) error {
			_, err := tx.ClaimAnnouncement(ctx, dv.ID, to, dv.Announced)
			return err
		}))
		return pipeline.AnnouncedNone, err
	}
	t.log.InfoContext(ctx, "version announced", "version", v.Number, "announced", to)
	return to, nil
}

// act carries out one announcement.
func (w *SyncWorker) act(ctx context.Context, t ticketView, vv versionView, to pipeline.Announcement, body string, active bool) error {
	owner, name, issue, v := t.repo.Owner, t.repo.Name, t.tk.IssueNumber, vv.v
	switch to {
	case pipeline.AnnouncedApproved:
		if err := t.gi.AddLabels(ctx, owner, name, issue, approvedLabel); err != nil {
			return err
		}
		// The same coverage the approval card showed the approver.
		tests, known := len(v.Files), []string(nil)
		if c := vv.status.Check; c != nil && len(c.Tests) > 0 {
			tests, known = len(c.Tests), c.Tests
		}
		covered, criteria := pipeline.CoverageOf(pipeline.ParseCriteria(t.tk.Body), v.Criteria, known).Counts()
		by := ""
		if v.Decision != nil {
			by = v.Decision.By
		}
		body = pipeline.ApprovedComment(issue, v.Number, v.Digest, tests, covered, criteria, by)
		if _, err := t.gi.CreateComment(ctx, owner, name, issue, body); err != nil {
			return err
		}
		if err := w.grades.cancelTicket(ctx, t.gi, t.repo, t.tk, v.Digest, fmt.Sprintf("Hidden tests v%d were approved: this grade against an earlier version was cancelled.", v.Number)); err != nil {
			return err
		}
		if err := w.implement(ctx, t, v, active); err != nil {
			return err
		}
		if active {
			_, err := w.grades.gradeOpenPulls(ctx, t.gi, t.repo, t.tk, v, false)
			return err
		}
		return nil
	case pipeline.AnnouncedSuperseded:
		if err := t.gi.RemoveLabel(ctx, owner, name, issue, approvedLabel); err != nil {
			return err
		}
		if err := w.grades.cancelTicket(ctx, t.gi, t.repo, t.tk, "", fmt.Sprintf("The approval of hidden tests v%d was reopened: this grade was cancelled.", v.Number)); err != nil {
			return err
		}
		// No green stays green on tests that were replaced.
		if err := w.supersede(ctx, t); err != nil {
			return err
		}
		body = pipeline.ReopenedComment(v.Number, t.newest)
	case pipeline.AnnouncedReady, pipeline.AnnouncedInvalid, pipeline.AnnouncedRejected:
		// Pull requests waiting for approved tests say where they stand.
		if active {
			if err := w.grades.refreshWaiting(ctx, t.gi, t.repo, t.tk); err != nil {
				return err
			}
		}
		// A writer's invalid tests go back to it, with the problems.
		if to == pipeline.AnnouncedInvalid && active && vv.status.Check != nil {
			if _, ok := pipeline.AgentHarnessOf(v.Author); ok {
				fc := w.agents.withHarnesses(pipeline.FetchConfig(ctx, t.gi, owner, name, t.repo.DefaultBranch))
				if fc.LoadError != nil {
					return fc.LoadError
				}
				if fc.ParseError == nil {
					var note string
					if err := w.db.Tx(ctx, func(tx *db.Tx) error {
						var err error
						note, err = w.agents.retryInvalid(ctx, tx, t.tk, fc.Config, v, *vv.status.Check)
						return err
					}); err != nil {
						return err
					}
					body += note
				}
			}
		}
	}
	_, err := t.gi.CreateComment(ctx, owner, name, issue, body)
	return err
}

// supersede completes again as superseded the ticket's grades against
// versions older than its newest, on every open pull request.
func (w *SyncWorker) supersede(ctx context.Context, t ticketView) error {
	var newest *pipeline.VersionStatus
	if err := w.db.Tx(ctx, func(tx *db.Tx) error {
		var err error
		newest, err = newestStatus(ctx, tx, t.tk.ID)
		return err
	}); err != nil {
		return err
	}
	return w.grades.supersede(ctx, t.gi, t.repo, t.tk, newest)
}

// settle stops a ticket rejected too often and moves the ticket to the
// state its versions say. The cap, in the repository's config, is read
// only when a rejection is new (announced now, or the state moves on), not
// on every periodic sync of a ticket that waits for its next version.
func (w *SyncWorker) settle(ctx context.Context, t ticketView, views []versionView, active, rejection bool) error {
	statuses := make([]pipeline.VersionStatus, len(views))
	for i, vv := range views {
		statuses[i] = vv.status
	}
	capReached := false
	if pipeline.RejectionIsNew(t.tk.State, statuses, rejection) {
		// A broken config is reported where the ticket was opened: the
		// defaults apply here.
		fc := pipeline.FetchConfig(ctx, t.gi, t.repo.Owner, t.repo.Name, t.repo.DefaultBranch)
		if fc.LoadError != nil {
			return retryOrCancel(fc.LoadError)
		}
		states := make([]pipeline.VersionState, len(statuses))
		for i, s := range statuses {
			states[i] = s.State
		}
		rejected := pipeline.Rejections(states)
		capReached = fc.Config.RejectionCapReached(rejected)
		if rejection && !capReached && active && len(views) > 0 {
			// The writer takes the reason up in a new round, on the same
			// base with the same harness.
			fc = w.agents.withHarnesses(fc)
			if fc.ParseError == nil {
				reason := views[len(views)-1].dv.RejectionReason
				if err := w.db.Tx(ctx, func(tx *db.Tx) error { return w.agents.startWriter(ctx, tx, t.tk, fc.Config, reason) }); err != nil {
					return err
				}
			}
		}
		if capReached && active {
			if err := t.gi.AddLabels(ctx, t.repo.Owner, t.repo.Name, t.tk.IssueNumber, pairLabel); err != nil {
				return retryOrCancel(err)
			}
			if _, err := t.gi.CreateComment(ctx, t.repo.Owner, t.repo.Name, t.tk.IssueNumber, pipeline.StoppedComment(rejected)); err != nil {
				return retryOrCancel(err)
			}
		}
	}
	state := pipeline.NextTicketState(t.tk.State, statuses, capReached)
	if state == t.tk.State {
		return nil
	}
	return w.db.Tx(ctx, func(tx *db.Tx) error {
		if err := tx.SetTicketState(ctx, t.tk.ID, state); err != nil {
			return err
		}
		t.log.InfoContext(ctx, "ticket state", "from", t.tk.State, "to", state)
		return audit(ctx, tx, "testfirst", t.tk.ID, "ticket."+string(state), map[string]any{"from": t.tk.State})
	})
}

// EnqueueSync asks for one ticket's store sync now, rather than at the
// next tick: the card calls it after a decision.
func EnqueueSync(ctx context.Context, d *db.DB, ticket int64) error {
	return d.Tx(ctx, func(tx *db.Tx) error { return tx.InsertJob(ctx, SyncArgs{Ticket: ticket}, nil) })
}

// implement cancels the ticket's implementer runs against other versions
// and, when the repository names an implementer and the ticket is active,
// starts its first round against approved version v (or records it
// refused, under agents.independence: refuse, and says so on the issue).
func (w *SyncWorker) implement(ctx context.Context, t ticketView, v store.Version, active bool) error {
	if w.agents == nil {
		return nil
	}
	fc := w.agents.withHarnesses(pipeline.FetchConfig(ctx, t.gi, t.repo.Owner, t.repo.Name, t.repo.DefaultBranch))
	if fc.LoadError != nil {
		return fc.LoadError
	}
	var (
		refused db.AgentRun
		isNew   bool
	)
	if err := w.db.Tx(ctx, func(tx *db.Tx) error {
		if err := w.agents.cancelImplementers(ctx, tx, t.tk.ID, v.Digest, fmt.Sprintf("hidden tests v%d were approved", v.Number)); err != nil {
			return err
		}
		if !active || fc.ParseError != nil {
			return nil
		}
		var err error
		refused, isNew, err = w.agents.startImplementer(ctx, tx, t.tk, fc.Config, v, 1, "")
		return err
	}); err != nil {
		return err
	}
	if !isNew {
		return nil
	}
	_, err := t.gi.CreateComment(ctx, t.repo.Owner, t.repo.Name, t.tk.IssueNumber,
		pipeline.AgentRunComment(refused.Role, refused.Harness, refused.Round, refused.Outcome, refused.Error))
	return err
}
