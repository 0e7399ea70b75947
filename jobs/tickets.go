package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/pipeline"
)

// issuePayload is the part of an issues payload the worker reads.
type issuePayload struct {
	repoPayload
	Action string `json:"action"`
	Label  struct {
		Name string `json:"name"`
	} `json:"label"`
	Issue struct {
		Number  int    `json:"number"`
		Title   string `json:"title"`
		Body    string `json:"body"`
		HTMLURL string `json:"html_url"`
		Labels  []struct {
			Name string `json:"name"`
		} `json:"labels"`
	} `json:"issue"`
}

// issue handles the issue events of a ticket: the configured label opens
// the ticket (or takes it up again) and its removal withdraws it; closing
// and reopening the issue pause and resume it; an edit refreshes the text
// the card reads the acceptance criteria from.
func (w *DeliveryWorker) issue(ctx context.Context, a DeliveryArgs) error {
	var p issuePayload
	if err := json.Unmarshal(a.Payload, &p); err != nil {
		return river.JobCancel(fmt.Errorf("delivery %s: payload: %w", a.Delivery, err))
	}
	if p.Action == "opened" || p.Action == "edited" {
		if err := w.scanPasted(ctx, p.repoPayload, p.Issue.Title+"\n"+p.Issue.Body, pastedPlace{SeenIn: fmt.Sprintf("the description of issue #%d", p.Issue.Number),
			URL: p.Issue.HTMLURL, Author: p.Sender.Login}); err != nil {
			return err
		}
	}
	switch p.Action {
	case "labeled":
		return w.labeled(ctx, a, p, []string{p.Label.Name}, byLabel)
	case "unlabeled", "closed", "reopened", "edited":
		return w.ticketEvent(ctx, a, p)
	}
	return nil
}

// opener is the event that opens a ticket, for whom labeled must check.
type opener int

const (
	// byLabel: the label was just put on the issue, which takes triage
	// access on GitHub.
	byLabel opener = iota
	// byEdit: an edit or a reopening of a labelled issue, which its author
	// may make without any access: the sender must have write access.
	byEdit
	// byCommand: a command in a comment, whose author's write access was
	// checked before.
	byCommand
)

// labeled opens a ticket when the configured label is among labels (the
// one just put on the issue, or those it carries), with its base pinned to
// the default branch's head; the event's sender is its requester. On an
// existing ticket it takes the ticket up again after the label was
// removed. A broken config is said on the issue when the label was just
// put on it.
func (w *DeliveryWorker) labeled(ctx context.Context, a DeliveryArgs, p issuePayload, labels []string, by opener) error {
	owner, name := p.Repository.Owner.Login, p.Repository.Name
	gi, err := w.github.Installation(p.Installation.ID)
	if err != nil {
		return err
	}
	fc := w.agents.withHarnesses(pipeline.FetchConfig(ctx, gi, owner, name, p.Repository.DefaultBranch))
	switch {
	case fc.LoadError != nil:
		return retryOrCancel(fc.LoadError)
	case fc.ParseError != nil && by != byLabel:
		return nil // said when the label was put on
	case fc.ParseError != nil:
		// The repository's config is wrong: say exactly what, where the
		// requester looks.
		if _, err := gi.CreateComment(ctx, owner, name, p.Issue.Number, pipeline.ConfigErrorComment(fc.ParseError)); err != nil {
			return retryOrCancel(err)
		}
		// Kept for the repository's admins, whom the app's home page
		// tells while the file stays broken.
		return w.db.Tx(ctx, func(tx *db.Tx) error {
			return audit(ctx, tx, p.Sender.Login, 0, pipeline.AuditConfigError, map[string]any{
				"installation": p.Installation.ID, "owner": owner, "repo": name, "issue": p.Issue.Number, "error": fc.ParseError.Error()})
		})
	}
	cfg := fc.Config
	if !slices.ContainsFunc(labels, func(l string) bool { return strings.EqualFold(l, cfg.Label) }) {
		return nil
	}
	if by == byEdit {
		perm, err := gi.Permission(ctx, owner, name, p.Sender.Login)
		if err != nil && !errors.Is(err, github.ErrNotFound) {
			return retryOrCancel(err)
		}
		if !pipeline.HasWriteAccess(perm) {
			w.log.InfoContext(ctx, "labelled issue not taken up: its sender lacks write access", "delivery", a.Delivery,
				"repo", owner+"/"+name, "issue", p.Issue.Number, "user", p.Sender.Login, "permission", perm)
			return nil
		}
	}
	base, err := gi.BranchHead(ctx, owner, name, p.Repository.DefaultBranch)
	if err != nil {
		return retryOrCancel(err)
	}
	var (
		resumed, opened bool
		repo            db.Repository
		tk              db.Ticket
		// labelOn: GitHub said the label is on the issue now.
		labelOn bool
	)
	take := func(tx *db.Tx) error {
		var (
			created bool
			err     error
		)
		if repo, err = p.record(ctx, tx); err != nil {
			return err
		}
		tk, created, err = tx.OpenTicket(ctx, db.Ticket{RepositoryID: repo.ID, IssueNumber: p.Issue.Number, Requester: p.Sender.Login, RequesterID: p.Sender.ID,
			BaseSHA: base, State: pipeline.TicketWriting, Label: cfg.Label, Title: p.Issue.Title, Body: p.Issue.Body})
		if err != nil {
			return err
		}
		log := w.log.With("delivery", a.Delivery, "installation", p.Installation.ID, "repo", owner+"/"+name, "ticket", tk.ID)
		if !created {
			if tk.WithdrawnAt.IsZero() {
				return nil // labelled twice, or a redelivery
			}
			if !labelOn {
				return errAskGitHub
			}
			if err := tx.SetTicketWithdrawn(ctx, tk.ID, time.Time{}); err != nil {
				return err
			}
			tk.WithdrawnAt, resumed = time.Time{}, true
			log.InfoContext(ctx, "ticket taken up again")
			if err := audit(ctx, tx, p.Sender.Login, tk.ID, "ticket.relabeled", map[string]any{"delivery": a.Delivery}); err != nil {
				return err
			}
			return w.grades.enqueueSync(ctx, tx, tk.ID)
		}
		log.InfoContext(ctx, "ticket opened", "base_sha", base)
		opened = true
		if err := audit(ctx, tx, p.Sender.Login, tk.ID, "ticket.opened", map[string]any{"delivery": a.Delivery, "base_sha": base, "issue": p.Issue.Number}); err != nil {
			return err
		}
		// A repository that names a writer has it write the tests.
		return w.agents.startWriter(ctx, tx, tk, cfg, "")
	}
	err = w.db.Tx(ctx, take)
	if errors.Is(err, errAskGitHub) {
		// A withdrawn ticket is taken up again only while its label is on
		// the issue: a labeled delivery may arrive after the label came
		// off again (GitHub redelivering an attempt that failed, or the
		// same signed body sent again), and the payload says only what
		// was true when it was sent.
		labels, lerr := gi.IssueLabels(ctx, owner, name, p.Issue.Number)
		if lerr != nil {
			return retryOrCancel(lerr)
		}
		if !slices.ContainsFunc(labels, func(l string) bool { return strings.EqualFold(l, tk.Label) }) {
			w.log.InfoContext(ctx, "ticket not taken up again: the label is not on the issue", "delivery", a.Delivery,
				"installation", p.Installation.ID, "repo", owner+"/"+name, "ticket", tk.ID, "label", tk.Label)
			return nil
		}
		labelOn = true
		err = w.db.Tx(ctx, take)
	}
	if err != nil {
		return err
	}
	if opened {
		// Nobody waits without knowing what comes next. (A retry after a
		// failed comment finds the ticket opened: the comment is made at
		// most once.)
		body := pipeline.OpenedComment(owner, name, p.Issue.Number, p.Installation.ID, base, tk.Requester,
			strings.TrimSuffix(w.publicURL, "/")+pipeline.TicketPath(owner, name, p.Issue.Number))
		if w.agents != nil && (cfg.Writer != pipeline.AgentNone || cfg.Implementer != pipeline.AgentNone) {
			body += pipeline.AgentsOpenedNote(p.Issue.Number, cfg.Writer, cfg.Implementer)
		}
		_, err := gi.CreateComment(ctx, owner, name, p.Issue.Number, body)
		return retryOrCancel(err)
	}
	if !resumed {
		return nil
	}
	return w.grades.resume(ctx, gi, repo, tk)
}

// ticketEvent handles unlabeled, closed, reopened and edited on a ticket's
// issue. Withdrawing or closing cancels the ticket's running grades;
// taking it up again grades the open pull requests that close it.
//
// A payload says what was true when it was sent, and a delivery may arrive
// late (GitHub redelivering an attempt that failed) or be sent again under
// another id by whoever kept its signed body. So before a delivery changes
// a ticket, GitHub is asked how the issue is now, and the ticket follows
// that: a late reopened does not reopen an issue closed since, a late
// closed does not close one reopened since, and an edit sets the text the
// issue has now, not the one in the payload.
func (w *DeliveryWorker) ticketEvent(ctx context.Context, a DeliveryArgs, p issuePayload) error {
	if p.Action == "unlabeled" {
		if refused, err := w.unlabelRefused(ctx, a, p); refused || err != nil {
			return err
		}
	}
	var (
		tk   db.Ticket
		repo db.Repository
		// labelOff: GitHub said the label is off the issue now.
		labelOff bool
		// now: the issue as GitHub shows it, once asked.
		now *github.Issue
	)
	change := func(tx *db.Tx) error {
		var err error
		if repo, err = p.record(ctx, tx); err != nil {
			return err
		}
		if tk, err = tx.TicketByIssue(ctx, repo.ID, p.Issue.Number); err != nil {
			return err
		}
		t := time.Now()
		switch {
		case p.Action == "unlabeled" && strings.EqualFold(p.Label.Name, tk.Label) && tk.WithdrawnAt.IsZero() && !labelOff:
			return errAskGitHub
		case p.Action == "unlabeled" && strings.EqualFold(p.Label.Name, tk.Label) && tk.WithdrawnAt.IsZero():
			err = tx.SetTicketWithdrawn(ctx, tk.ID, t)
			tk.WithdrawnAt = t
		case p.Action == "closed" && tk.ClosedAt.IsZero(),
			p.Action == "reopened" && !tk.ClosedAt.IsZero(),
			p.Action == "edited":
			if now == nil {
				return errAskGitHub
			}
			switch {
			case p.Action == "closed" && !now.Open:
				err = tx.SetTicketClosed(ctx, tk.ID, t)
				tk.ClosedAt = t
			case p.Action == "reopened" && now.Open:
				err = tx.SetTicketClosed(ctx, tk.ID, time.Time{})
				tk.ClosedAt = time.Time{}
			case p.Action == "edited" && (now.Title != tk.Title || now.Body != tk.Body):
				err = tx.SetTicketIssue(ctx, tk.ID, now.Title, now.Body)
			default:
				return errGitHubDisagrees
			}
		default:
			return errNothingToDo
		}
		if err != nil {
			return err
		}
		if p.Action == "unlabeled" || p.Action == "closed" {
			if err := w.agents.cancelAll(ctx, tx, tk.ID, "the ticket was "+map[string]string{"unlabeled": "withdrawn", "closed": "closed"}[p.Action]); err != nil {
				return err
			}
		}
		w.log.InfoContext(ctx, "ticket "+p.Action, "delivery", a.Delivery, "installation", p.Installation.ID, "repo", repo.Owner+"/"+repo.Name, "ticket", tk.ID)
		return audit(ctx, tx, p.Sender.Login, tk.ID, "ticket."+p.Action, map[string]any{"delivery": a.Delivery})
	}
	err := w.db.Tx(ctx, change)
	if errors.Is(err, errAskGitHub) {
		gi, gerr := w.github.Installation(p.Installation.ID)
		if gerr != nil {
			return gerr
		}
		if p.Action == "unlabeled" {
			// An unlabeled payload says the label came off when it was
			// sent; a redelivery of it may arrive after the label went
			// back on.
			labels, lerr := gi.IssueLabels(ctx, repo.Owner, repo.Name, p.Issue.Number)
			if lerr != nil {
				return retryOrCancel(lerr)
			}
			if slices.ContainsFunc(labels, func(l string) bool { return strings.EqualFold(l, tk.Label) }) {
				w.log.InfoContext(ctx, "ticket not withdrawn: the label is on the issue", "delivery", a.Delivery,
					"installation", p.Installation.ID, "repo", repo.Owner+"/"+repo.Name, "ticket", tk.ID, "label", tk.Label)
				return nil
			}
			labelOff = true
		} else {
			is, ierr := gi.Issue(ctx, repo.Owner, repo.Name, p.Issue.Number)
			if ierr != nil {
				return retryOrCancel(ierr)
			}
			now = &is
		}
		err = w.db.Tx(ctx, change)
	}
	if errors.Is(err, errGitHubDisagrees) {
		w.log.InfoContext(ctx, "ticket left as GitHub shows its issue", "delivery", a.Delivery, "action", p.Action,
			"installation", p.Installation.ID, "repo", repo.Owner+"/"+repo.Name, "ticket", tk.ID, "open", now.Open)
		return nil
	}
	if errors.Is(err, db.ErrNotFound) && (p.Action == "edited" || p.Action == "reopened") {
		return w.retake(ctx, a, p, byEdit)
	}
	if errors.Is(err, db.ErrNotFound) || errors.Is(err, errNothingToDo) {
		return nil // not a ticket, or nothing changed (a redelivery)
	}
	if err != nil {
		return err
	}
	gi, err := w.github.Installation(p.Installation.ID)
	if err != nil {
		return err
	}
	switch p.Action {
	case "unlabeled", "closed":
		why := fmt.Sprintf("Issue #%d was closed: its grades were cancelled.", tk.IssueNumber)
		if p.Action == "unlabeled" {
			why = fmt.Sprintf("The %s label was removed from issue #%d: its grades were cancelled.", tk.Label, tk.IssueNumber)
		}
		if err := w.grades.cancelTicket(ctx, gi, repo, tk, "", why); err != nil {
			return err
		}
		if p.Action == "unlabeled" {
			// A withdrawn ticket's earlier grades no longer count.
			return w.grades.withdraw(ctx, gi, repo, tk, p.Sender.Login)
		}
		return nil
	case "reopened":
		return w.grades.resume(ctx, gi, repo, tk)
	}
	return nil
}

// unlabelRefused keeps a ticket whose label was removed by someone who may
// not withdraw it: removing a label takes triage access on GitHub, but a
// withdrawal ends the requester's ticket and its check runs' grades, so it
// is the requester's or a writer's. The ticket stays open and graded; the
// issue says who removed the label and who may withdraw the ticket.
func (w *DeliveryWorker) unlabelRefused(ctx context.Context, a DeliveryArgs, p issuePayload) (bool, error) {
	repo, tk, err := w.issueTicket(ctx, p.repoPayload, p.Issue.Number)
	if errors.Is(err, db.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !strings.EqualFold(p.Label.Name, tk.Label) || !tk.WithdrawnAt.IsZero() ||
		// The requester's account, by id where the ticket knows it: a
		// login can pass to someone else.
		(strings.EqualFold(p.Sender.Login, tk.Requester) && (tk.RequesterID == 0 || p.Sender.ID == tk.RequesterID)) {
		return false, nil
	}
	gi, err := w.github.Installation(p.Installation.ID)
	if err != nil {
		return false, err
	}
	perm, err := gi.Permission(ctx, repo.Owner, repo.Name, p.Sender.Login)
	if err != nil && !errors.Is(err, github.ErrNotFound) {
		return false, retryOrCancel(err)
	}
	if pipeline.HasWriteAccess(perm) {
		return false, nil
	}
	if err := w.db.Tx(ctx, func(tx *db.Tx) error {
		return audit(ctx, tx, p.Sender.Login, tk.ID, "ticket.unlabel_refused", map[string]any{"delivery": a.Delivery, "permission": perm})
	}); err != nil {
		return false, err
	}
	w.log.InfoContext(ctx, "withdrawal refused", "delivery", a.Delivery, "repo", repo.Owner+"/"+repo.Name, "ticket", tk.ID, "user", p.Sender.Login, "permission", perm)
	_, err = gi.CreateComment(ctx, repo.Owner, repo.Name, p.Issue.Number, pipeline.UnlabelRefusedComment(p.Sender.Login, tk.Requester, tk.Label))
	return true, retryOrCancel(err)
}

// issueTicket records the payload's repository and reads the ticket of its
// issue: db.ErrNotFound when the issue is not a ticket.
func (w *DeliveryWorker) issueTicket(ctx context.Context, p repoPayload, issue int) (db.Repository, db.Ticket, error) {
	var (
		repo db.Repository
		tk   db.Ticket
	)
	err := w.db.Tx(ctx, func(tx *db.Tx) error {
		var err error
		if repo, err = p.record(ctx, tx); err != nil {
			return err
		}
		tk, err = tx.TicketByIssue(ctx, repo.ID, issue)
		return err
	})
	return repo, tk, err
}

// errNothingToDo ends a transaction that found nothing to change.
var errNothingToDo = errors.New("nothing to do")

// errAskGitHub ends a transaction that must not go on before GitHub is
// asked how things are now.
var errAskGitHub = errors.New("ask GitHub first")

// errGitHubDisagrees ends a transaction whose delivery GitHub, asked, does
// not bear out now: the change it asks for is not how the issue is.
var errGitHubDisagrees = errors.New("GitHub shows otherwise")

// retake reads the config again for an issue that is labelled but is not a
// ticket: perhaps the label came while the config was broken (the config
// error comment says to edit the issue or comment /testfirst status once
// it is fixed). It opens the ticket when the config now reads and names one
// of the issue's labels, and the sender may open it (labeled). The labels
// and the text are the issue's as GitHub shows it now, not the payload's
// (which may be late); a reopening opens nothing on an issue closed since.
func (w *DeliveryWorker) retake(ctx context.Context, a DeliveryArgs, p issuePayload, by opener) error {
	if len(p.Issue.Labels) == 0 {
		return nil // unlabelled when sent: a labeled delivery comes after
	}
	gi, err := w.github.Installation(p.Installation.ID)
	if err != nil {
		return err
	}
	is, err := gi.Issue(ctx, p.Repository.Owner.Login, p.Repository.Name, p.Issue.Number)
	if err != nil {
		return retryOrCancel(err)
	}
	if p.Action == "reopened" && !is.Open {
		w.log.InfoContext(ctx, "labelled issue not taken up: it is closed on GitHub", "delivery", a.Delivery,
			"repo", p.Repository.Owner.Login+"/"+p.Repository.Name, "issue", p.Issue.Number)
		return nil
	}
	p.Issue.Title, p.Issue.Body = is.Title, is.Body
	return w.labeled(ctx, a, p, is.Labels, by)
}
