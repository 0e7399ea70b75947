package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/riverqueue/river"

	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/pipeline"
)

// commentPayload is the part of an issue_comment payload the worker reads.
type commentPayload struct {
	repoPayload
	Comment struct {
		Body string `json:"body"`
		User struct {
			Login string `json:"login"`
			Type  string `json:"type"`
		} `json:"user"`
	} `json:"comment"`
	Issue struct {
		Number      int             `json:"number"`
		PullRequest json.RawMessage `json:"pull_request"`
	} `json:"issue"`
}

// commandTarget is what a command's issue or pull request is, read in the
// transaction that records the command.
type commandTarget struct {
	repo db.Repository
	// On an issue: its ticket (found says whether it is one), the ticket's
	// versions and the open pull requests that close it.
	tk    db.Ticket
	found bool
	vs    []db.Version
	prs   []db.PullRequest
	// On a pull request: the pull request (found says whether it is
	// recorded), the tickets it closes and the grades of its head.
	pr      db.PullRequest
	tickets []db.Ticket
	grades  []db.Grade
}

// issueComment runs "/testfirst status" and "/testfirst regrade" from users
// with write access to the repository. On a pull request, status reports
// its grades and regrade grades its head again; on a ticket's issue, status
// reports the ticket and regrade grades every open pull request that
// closes it.
func (w *DeliveryWorker) issueComment(ctx context.Context, a DeliveryArgs) error {
	var p commentPayload
	if err := json.Unmarshal(a.Payload, &p); err != nil {
		return river.JobCancel(fmt.Errorf("delivery %s: payload: %w", a.Delivery, err))
	}
	cmd, ok := pipeline.ParseCommand(p.Comment.Body)
	if !ok || p.Comment.User.Type == "Bot" {
		return nil
	}
	owner, name, number, user := p.Repository.Owner.Login, p.Repository.Name, p.Issue.Number, p.Comment.User.Login
	gi, err := w.github.Installation(p.Installation.ID)
	if err != nil {
		return err
	}
	reply := func(body string) error {
		if body == "" {
			return nil
		}
		_, err := gi.CreateComment(ctx, owner, name, number, body)
		return retryOrCancel(err)
	}
	if !cmd.Known() {
		return reply(pipeline.UnknownCommandReply)
	}
	perm, err := gi.Permission(ctx, owner, name, user)
	if err != nil && !errors.Is(err, github.ErrNotFound) {
		return retryOrCancel(err)
	}
	if !pipeline.HasWriteAccess(perm) {
		w.log.InfoContext(ctx, "command refused", "delivery", a.Delivery, "repo", owner+"/"+name, "user", user, "permission", perm)
		return reply(pipeline.CommandRefusedReply(cmd, owner, name))
	}
	isPull := len(p.Issue.PullRequest) > 0 && string(p.Issue.PullRequest) != "null"
	var t commandTarget
	if err := w.db.Tx(ctx, func(tx *db.Tx) error {
		var err error
		if t, err = readCommandTarget(ctx, tx, p.repoPayload, number, isPull); err != nil {
			return err
		}
		// The command is recorded on every ticket it concerns; one that
		// concerns none is recorded on none.
		detail := map[string]any{"delivery": a.Delivery, "issue": number}
		ids := []int64{0}
		switch {
		case !isPull && t.found:
			ids = []int64{t.tk.ID}
		case isPull && len(t.tickets) > 0:
			ids = ids[:0]
			for _, tk := range t.tickets {
				ids = append(ids, tk.ID)
			}
		}
		for _, id := range ids {
			if err := audit(ctx, tx, user, id, "command."+string(cmd), detail); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}
	switch {
	case !isPull && !t.found:
		return reply(fmt.Sprintf("#%d is not a testfirst ticket: label it `test-first` to open one.", number))
	case isPull && len(t.tickets) == 0:
		return reply("This pull request closes no testfirst ticket: say `Fixes #<issue>` in its description to link one.")
	case cmd == pipeline.CommandStatus && !isPull:
		return reply(ticketStatus(t.tk, t.vs, t.prs))
	case cmd == pipeline.CommandStatus:
		return reply(pullStatus(t.pr, t.tickets, t.grades))
	case !isPull:
		body, err := w.grades.regradeIssue(ctx, gi, t.repo, t.tk)
		if err != nil {
			return err
		}
		return reply(body)
	default:
		body, err := w.grades.regradePull(ctx, gi, t.repo, t.pr, t.tickets)
		if err != nil {
			return err
		}
		return reply(body)
	}
}

// readCommandTarget reads the issue or pull request a command was given
// on. A number that is no ticket, or a pull request not recorded, is not
// an error; a failing query is.
func readCommandTarget(ctx context.Context, tx *db.Tx, p repoPayload, number int, isPull bool) (commandTarget, error) {
	var (
		t   commandTarget
		err error
	)
	if t.repo, err = p.record(ctx, tx); err != nil {
		return t, err
	}
	if !isPull {
		t.tk, err = tx.TicketByIssue(ctx, t.repo.ID, number)
		if errors.Is(err, db.ErrNotFound) {
			return t, nil
		}
		if err != nil {
			return t, err
		}
		t.found = true
		if t.vs, err = tx.Versions(ctx, t.tk.ID); err != nil {
			return t, err
		}
		t.prs, err = tx.OpenPullsClosing(ctx, t.repo.ID, t.tk.IssueNumber)
		return t, err
	}
	t.pr, err = tx.PullRequest(ctx, t.repo.ID, number)
	if errors.Is(err, db.ErrNotFound) {
		return t, nil
	}
	if err != nil {
		return t, err
	}
	t.found = true
	for _, issue := range t.pr.Links {
		tk, err := tx.TicketByIssue(ctx, t.repo.ID, issue)
		if errors.Is(err, db.ErrNotFound) {
			continue
		}
		if err != nil {
			return t, err
		}
		t.tickets = append(t.tickets, tk)
	}
	t.grades, err = tx.GradesOfHead(ctx, t.pr.HeadSHA)
	return t, err
}

// ticketStatus says where a ticket stands, in states and counts only.
func ticketStatus(tk db.Ticket, vs []db.Version, prs []db.PullRequest) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**testfirst** #%d: %s", tk.IssueNumber, strings.ReplaceAll(string(tk.State), "_", " "))
	if !tk.ClosedAt.IsZero() {
		b.WriteString(" (issue closed)")
	}
	if !tk.WithdrawnAt.IsZero() {
		fmt.Fprintf(&b, " (label `%s` removed)", tk.Label)
	}
	fmt.Fprintf(&b, "\n\n- base commit: `%.12s`\n", tk.BaseSHA)
	if len(vs) == 0 {
		b.WriteString("- hidden tests: none pushed yet\n")
	}
	for _, v := range vs {
		fmt.Fprintf(&b, "- hidden tests v%d: %s (`%s`)\n", v.Number, v.State, v.Digest)
	}
	for _, pr := range prs {
		fmt.Fprintf(&b, "- pull request #%d at `%.12s`\n", pr.Number, pr.HeadSHA)
	}
	return b.String()
}

// pullStatus says how a pull request's head was graded.
func pullStatus(pr db.PullRequest, tickets []db.Ticket, grades []db.Grade) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**testfirst** #%d at `%.12s` closes", pr.Number, pr.HeadSHA)
	for _, tk := range tickets {
		fmt.Fprintf(&b, " #%d (%s)", tk.IssueNumber, strings.ReplaceAll(string(tk.State), "_", " "))
	}
	b.WriteString("\n\n")
	if len(grades) == 0 {
		b.WriteString("- no grade of this head yet\n")
	}
	for _, g := range grades {
		if g.State == pipeline.GradeCompleted {
			fmt.Fprintf(&b, "- hidden tests v%d: %s, %d/%d passed, trust %s\n", g.VersionNumber, g.Verdict, g.Passed, g.Total, g.Trust)
		} else {
			fmt.Fprintf(&b, "- hidden tests v%d: %s\n", g.VersionNumber, g.State)
		}
	}
	return b.String()
}
