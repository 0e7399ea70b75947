package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/riverqueue/river"

	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/pipeline"
)

// pullPayload is the part of a pull_request payload the worker reads.
type pullPayload struct {
	repoPayload
	Action      string `json:"action"`
	Number      int    `json:"number"`
	PullRequest struct {
		Body    string `json:"body"`
		Title   string `json:"title"`
		HTMLURL string `json:"html_url"`
		State   string `json:"state"`
		Merged  bool   `json:"merged"`
		User    struct {
			Login string `json:"login"`
		} `json:"user"`
		Head struct {
			SHA string `json:"sha"`
		} `json:"head"`
	} `json:"pull_request"`
}

// pullRequest handles a pull request event. It records the pull request,
// its head and the tickets its body closes; cancels the grades a new head,
// a closed pull request or a dropped link makes pointless; and grades the
// head against each linked ticket's approved tests, once per (head,
// digest).
func (w *DeliveryWorker) pullRequest(ctx context.Context, a DeliveryArgs) error {
	var p pullPayload
	if err := json.Unmarshal(a.Payload, &p); err != nil {
		return river.JobCancel(fmt.Errorf("delivery %s: payload: %w", a.Delivery, err))
	}
	if p.Action == "opened" || p.Action == "edited" {
		if err := w.scanPasted(ctx, p.repoPayload, p.PullRequest.Title+"\n"+p.PullRequest.Body, pastedPlace{
			SeenIn: fmt.Sprintf("the description of pull request #%d", p.Number), URL: p.PullRequest.HTMLURL, Author: p.PullRequest.User.Login}); err != nil {
			return err
		}
	}
	owner, name := p.Repository.Owner.Login, p.Repository.Name
	var links []int
	for _, ref := range pipeline.Links(p.PullRequest.Body, owner, name) {
		// Tickets live in the pull request's own repository.
		if strings.EqualFold(ref.Owner, owner) && strings.EqualFold(ref.Repo, name) && !slices.Contains(links, ref.Number) {
			links = append(links, ref.Number)
		}
	}
	open := p.Action != "closed" && p.PullRequest.State != "closed"
	head := p.PullRequest.Head.SHA
	var (
		repo    db.Repository
		stale   []db.Grade // grades this event makes pointless
		tickets []db.Ticket
	)
	err := w.db.Tx(ctx, func(tx *db.Tx) error {
		stale, tickets = nil, nil // the transaction may run again (db.Tx)
		var err error
		if repo, err = p.record(ctx, tx); err != nil {
			return err
		}
		if err := tx.UpsertPullRequest(ctx, db.PullRequest{RepositoryID: repo.ID, Number: p.Number, HeadSHA: head,
			Author: p.PullRequest.User.Login, Open: open, Links: links}); err != nil {
			return err
		}
		unfinished, err := tx.UnfinishedPullGrades(ctx, repo.ID, p.Number)
		if err != nil {
			return err
		}
		for _, issue := range links {
			tk, err := tx.TicketByIssue(ctx, repo.ID, issue)
			if errors.Is(err, db.ErrNotFound) {
				continue // the issue is no ticket
			}
			if err != nil {
				return err
			}
			tickets = append(tickets, tk)
		}
		for _, g := range unfinished {
			linked := slices.ContainsFunc(tickets, func(tk db.Ticket) bool { return tk.ID == g.TicketID })
			if !open || g.HeadSHA != head || !linked {
				stale = append(stale, g)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	gi, err := w.github.Installation(p.Installation.ID)
	if err != nil {
		return err
	}
	why := fmt.Sprintf("A newer commit was pushed to #%d: this grade of an older head was cancelled.", p.Number)
	if !open {
		why = fmt.Sprintf("Pull request #%d was closed: its grade was cancelled.", p.Number)
	}
	if err := w.grades.cancel(ctx, gi, repo, stale, why); err != nil {
		return err
	}
	if !open {
		if p.Action == "closed" && p.PullRequest.Merged && w.keeps {
			// A follow-up of kept tests waits for the merge.
			return w.db.Tx(ctx, func(tx *db.Tx) error { return enqueueKeep(ctx, tx, repo.ID, p.Number) })
		}
		return nil
	}
	for _, tk := range tickets {
		if _, err := w.grades.gradeTicket(ctx, gi, repo, tk, p.Number, head, false); err != nil {
			return err
		}
	}
	if p.Action == "edited" {
		// The description may link more tickets, or fewer, than before.
		return w.grades.rename(ctx, gi, repo, p.Number, head, tickets)
	}
	return nil
}

// checkRun handles a Regrade button or a re-run from the checks tab: the
// head is graded again against the ticket's approved tests.
func (w *DeliveryWorker) checkRun(ctx context.Context, a DeliveryArgs) error {
	var p struct {
		repoPayload
		CheckRun struct {
			Name       string `json:"name"`
			ExternalID string `json:"external_id"`
			HeadSHA    string `json:"head_sha"`
		} `json:"check_run"`
		RequestedAction struct {
			Identifier string `json:"identifier"`
		} `json:"requested_action"`
	}
	if err := json.Unmarshal(a.Payload, &p); err != nil {
		return river.JobCancel(fmt.Errorf("delivery %s: payload: %w", a.Delivery, err))
	}
	if !pipeline.IsCheckRunName(p.CheckRun.Name) || (a.Action == "requested_action" && p.RequestedAction.Identifier != pipeline.RegradeAction.Identifier) {
		return nil
	}
	for _, prefix := range []string{"wait-", "off-"} {
		if ticket, ok := strings.CutPrefix(p.CheckRun.ExternalID, prefix); ok {
			return w.rerunWaiting(ctx, p.repoPayload, ticket, p.CheckRun.HeadSHA)
		}
	}
	id, err := strconv.ParseInt(p.CheckRun.ExternalID, 10, 64)
	if err != nil || id <= 0 {
		return nil // not one of ours
	}
	var g db.Grade
	if err := w.db.Tx(ctx, func(tx *db.Tx) error {
		g, err = tx.Grade(ctx, id)
		return err
	}); errors.Is(err, db.ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	return w.regrade(ctx, p.repoPayload, []db.Grade{g}, p.Sender.Login)
}

// checkSuite handles "Re-run all checks": every grade of the suite's head
// is made again.
func (w *DeliveryWorker) checkSuite(ctx context.Context, a DeliveryArgs) error {
	var p struct {
		repoPayload
		CheckSuite struct {
			HeadSHA string `json:"head_sha"`
		} `json:"check_suite"`
	}
	if err := json.Unmarshal(a.Payload, &p); err != nil {
		return river.JobCancel(fmt.Errorf("delivery %s: payload: %w", a.Delivery, err))
	}
	var gs []db.Grade
	if err := w.db.Tx(ctx, func(tx *db.Tx) error {
		var err error
		gs, err = tx.GradesOfHead(ctx, p.CheckSuite.HeadSHA)
		return err
	}); err != nil {
		return err
	}
	return w.regrade(ctx, p.repoPayload, gs, p.Sender.Login)
}

// regrade grades again the heads of gs, each once per (ticket, pull
// request), against the ticket's approved tests as they are now.
func (w *DeliveryWorker) regrade(ctx context.Context, p repoPayload, gs []db.Grade, by string) error {
	if len(gs) == 0 {
		return nil
	}
	return w.grades.regrade(ctx, w.github, p.Installation.ID, p.Repository.ID, gs, by)
}

// rerunWaiting handles a re-run of a ticket's waiting check run (or of
// the run saying the installation cannot grade): the head is graded when
// the ticket has approved tests now, or its run says again why it is not.
// Never silently nothing.
func (w *DeliveryWorker) rerunWaiting(ctx context.Context, p repoPayload, ticket, head string) error {
	id, err := strconv.ParseInt(ticket, 10, 64)
	if err != nil {
		return nil // not one of ours
	}
	var (
		tk   db.Ticket
		repo db.Repository
		prs  []db.PullRequest
	)
	if err := w.db.Tx(ctx, func(tx *db.Tx) error {
		var err error
		if repo, err = p.record(ctx, tx); err != nil {
			return err
		}
		if tk, err = tx.Ticket(ctx, id); err != nil {
			return err
		}
		if tk.RepositoryID != repo.ID {
			return db.ErrNotFound
		}
		prs, err = tx.OpenPullsClosing(ctx, repo.ID, tk.IssueNumber)
		return err
	}); errors.Is(err, db.ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	gi, err := w.github.Installation(p.Installation.ID)
	if err != nil {
		return err
	}
	for _, pr := range prs {
		if pr.HeadSHA == head {
			if _, err := w.grades.gradeTicket(ctx, gi, repo, tk, pr.Number, head, true); err != nil {
				return err
			}
		}
	}
	return nil
}
