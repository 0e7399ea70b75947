package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/testfirst-app/testfirst/app/db"
	"github.com/testfirst-app/testfirst/app/pipeline"
	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/grader/store"
)

// Ticket states. A ticket is writing until a version is pushed, checking
// while the version's base check runs, awaiting approval once the check
// found it valid, approved once it is approved, and stopped after too many
// rejections. Whether its issue is closed or its label removed is kept
// beside the state.
const (
	TicketWriting          = "writing"
	TicketChecking         = "checking"
	TicketAwaitingApproval = "awaiting_approval"
	TicketApproved         = "approved"
	TicketStopped          = "stopped"
)

// repoPayload is the repository and installation part of a payload.
type repoPayload struct {
	Installation struct {
		ID int64 `json:"id"`
	} `json:"installation"`
	Repository struct {
		ID            int64  `json:"id"`
		Name          string `json:"name"`
		DefaultBranch string `json:"default_branch"`
		Owner         struct {
			Login string `json:"login"`
			Type  string `json:"type"`
		} `json:"owner"`
	} `json:"repository"`
	Sender struct {
		Login string `json:"login"`
	} `json:"sender"`
}

// record upserts the installation and repository a payload names.
func (p repoPayload) record(ctx context.Context, tx *db.Tx) (db.Repository, error) {
	r := p.Repository
	if err := tx.UpsertInstallation(ctx, db.Installation{ID: p.Installation.ID, AccountLogin: r.Owner.Login, AccountType: r.Owner.Type}); err != nil {
		return db.Repository{}, err
	}
	repo := db.Repository{ID: r.ID, InstallationID: p.Installation.ID, Owner: r.Owner.Login, Name: r.Name, DefaultBranch: r.DefaultBranch}
	return repo, tx.UpsertRepository(ctx, repo)
}

// repoConfig reads .github/testfirst.yml from the default branch, never
// from a pull request's head. A missing file means the defaults.
func repoConfig(ctx context.Context, gi *github.Installation, owner, repo, branch string) (pipeline.RepoConfig, error) {
	data, err := gi.File(ctx, owner, repo, branch, pipeline.RepoConfigPath)
	if errors.Is(err, github.ErrNotFound) {
		return pipeline.DefaultRepoConfig(), nil
	}
	if err != nil {
		return pipeline.RepoConfig{}, err
	}
	return pipeline.ParseRepoConfig(data)
}

// issuePayload is the part of an issues payload the worker reads.
type issuePayload struct {
	repoPayload
	Action string `json:"action"`
	Label  struct {
		Name string `json:"name"`
	} `json:"label"`
	Issue struct {
		Number int    `json:"number"`
		Title  string `json:"title"`
		Body   string `json:"body"`
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
	switch p.Action {
	case "labeled":
		return w.labeled(ctx, a, p)
	case "unlabeled", "closed", "reopened", "edited":
		return w.ticketEvent(ctx, a, p)
	}
	return nil
}

// labeled opens a ticket when the configured label is put on an issue,
// with its base pinned to the default branch's head. On an existing ticket
// it takes the ticket up again after the label was removed.
func (w *DeliveryWorker) labeled(ctx context.Context, a DeliveryArgs, p issuePayload) error {
	owner, name := p.Repository.Owner.Login, p.Repository.Name
	gi, err := w.github.Installation(p.Installation.ID)
	if err != nil {
		return err
	}
	cfg, err := repoConfig(ctx, gi, owner, name, p.Repository.DefaultBranch)
	var apiErr *github.APIError
	if err != nil && !errors.As(err, &apiErr) {
		// The repository's config is wrong: say exactly what, where the
		// requester looks.
		_, cerr := gi.CreateComment(ctx, owner, name, p.Issue.Number, "testfirst cannot read its configuration:\n\n```\n"+err.Error()+"\n```")
		if cerr != nil {
			return retryOrCancel(cerr)
		}
		return nil
	}
	if err != nil {
		return retryOrCancel(err)
	}
	if !strings.EqualFold(p.Label.Name, cfg.Label) {
		return nil
	}
	base, err := gi.BranchHead(ctx, owner, name, p.Repository.DefaultBranch)
	if err != nil {
		return retryOrCancel(err)
	}
	var (
		resumed bool
		repo    db.Repository
		tk      db.Ticket
	)
	err = w.db.Tx(ctx, func(tx *db.Tx) error {
		var (
			created bool
			err     error
		)
		if repo, err = p.record(ctx, tx); err != nil {
			return err
		}
		tk, created, err = tx.OpenTicket(ctx, db.Ticket{RepositoryID: repo.ID, IssueNumber: p.Issue.Number, Requester: p.Sender.Login,
			BaseSHA: base, State: TicketWriting, Label: cfg.Label, Title: p.Issue.Title, Body: p.Issue.Body})
		if err != nil {
			return err
		}
		log := w.log.With("delivery", a.Delivery, "installation", p.Installation.ID, "repo", owner+"/"+name, "ticket", tk.ID)
		if !created {
			if tk.WithdrawnAt.IsZero() {
				return nil // labelled twice, or a redelivery
			}
			if err := tx.SetTicketWithdrawn(ctx, tk.ID, time.Time{}); err != nil {
				return err
			}
			tk.WithdrawnAt, resumed = time.Time{}, true
			log.InfoContext(ctx, "ticket taken up again")
			if err := audit(ctx, tx, p.Sender.Login, tk.ID, "ticket.relabeled", map[string]any{"delivery": a.Delivery}); err != nil {
				return err
			}
			if w.grades.store == nil {
				return nil
			}
			return tx.InsertJob(ctx, SyncArgs{Ticket: tk.ID}, nil)
		}
		log.InfoContext(ctx, "ticket opened", "base_sha", base)
		return audit(ctx, tx, p.Sender.Login, tk.ID, "ticket.opened", map[string]any{"delivery": a.Delivery, "base_sha": base, "issue": p.Issue.Number})
	})
	if err != nil || !resumed {
		return err
	}
	return w.resume(ctx, gi, repo, tk)
}

// resume grades the open pull requests that close a ticket taken up again,
// when it has approved tests and is neither closed nor withdrawn.
func (w *DeliveryWorker) resume(ctx context.Context, gi *github.Installation, repo db.Repository, tk db.Ticket) error {
	if w.grades.store == nil || !tk.WithdrawnAt.IsZero() || !tk.ClosedAt.IsZero() {
		return nil
	}
	st := store.Ticket{Installation: repo.InstallationID, Owner: repo.Owner, Repo: repo.Name, Issue: tk.IssueNumber}
	v, err := approvedVersion(ctx, w.grades.store, st)
	if err != nil || v == nil {
		return err
	}
	_, err = w.grades.gradeOpenPulls(ctx, gi, repo, tk, *v, false)
	return err
}

// ticketEvent handles unlabeled, closed, reopened and edited on a ticket's
// issue. Withdrawing or closing cancels the ticket's running grades;
// taking it up again grades the open pull requests that close it.
func (w *DeliveryWorker) ticketEvent(ctx context.Context, a DeliveryArgs, p issuePayload) error {
	var (
		tk   db.Ticket
		repo db.Repository
	)
	err := w.db.Tx(ctx, func(tx *db.Tx) error {
		var err error
		if repo, err = p.record(ctx, tx); err != nil {
			return err
		}
		if tk, err = tx.TicketByIssue(ctx, repo.ID, p.Issue.Number); err != nil {
			return err
		}
		now := time.Now()
		switch {
		case p.Action == "unlabeled" && strings.EqualFold(p.Label.Name, tk.Label) && tk.WithdrawnAt.IsZero():
			err = tx.SetTicketWithdrawn(ctx, tk.ID, now)
			tk.WithdrawnAt = now
		case p.Action == "closed" && tk.ClosedAt.IsZero():
			err = tx.SetTicketClosed(ctx, tk.ID, now)
			tk.ClosedAt = now
		case p.Action == "reopened" && !tk.ClosedAt.IsZero():
			err = tx.SetTicketClosed(ctx, tk.ID, time.Time{})
			tk.ClosedAt = time.Time{}
		case p.Action == "edited":
			err = tx.SetTicketIssue(ctx, tk.ID, p.Issue.Title, p.Issue.Body)
		default:
			return errNothingToDo
		}
		if err != nil {
			return err
		}
		w.log.InfoContext(ctx, "ticket "+p.Action, "delivery", a.Delivery, "installation", p.Installation.ID, "repo", repo.Owner+"/"+repo.Name, "ticket", tk.ID)
		return audit(ctx, tx, p.Sender.Login, tk.ID, "ticket."+p.Action, map[string]any{"delivery": a.Delivery})
	})
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
		return w.grades.cancelTicket(ctx, gi, repo, tk, "", why)
	case "reopened":
		return w.resume(ctx, gi, repo, tk)
	}
	return nil
}

// errNothingToDo ends a transaction that found nothing to change.
var errNothingToDo = errors.New("nothing to do")
