package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/riverqueue/river"

	"github.com/testfirst-app/testfirst/app/db"
	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/grader/store"
)

// Commands users can give in an issue or pull request comment.
const (
	commandStatus  = "status"
	commandRegrade = "regrade"
)

// parseCommand returns the command of the first line of body that starts
// with "/testfirst", and whether there is one.
func parseCommand(body string) (string, bool) {
	for _, line := range strings.Split(body, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || fields[0] != "/testfirst" {
			continue
		}
		if len(fields) < 2 {
			return "", true
		}
		return strings.ToLower(fields[1]), true
	}
	return "", false
}

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

// canCommand lists the repository permissions that may give commands.
var canCommand = []string{"admin", "maintain", "write"}

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
	cmd, ok := parseCommand(p.Comment.Body)
	if !ok || p.Comment.User.Type == "Bot" {
		return nil
	}
	owner, name, number, user := p.Repository.Owner.Login, p.Repository.Name, p.Issue.Number, p.Comment.User.Login
	gi, err := w.github.Installation(p.Installation.ID)
	if err != nil {
		return err
	}
	reply := func(body string) error {
		_, err := gi.CreateComment(ctx, owner, name, number, body)
		return retryOrCancel(err)
	}
	if cmd != commandStatus && cmd != commandRegrade {
		return reply("testfirst knows two commands: `/testfirst status` and `/testfirst regrade`.")
	}
	perm, err := gi.Permission(ctx, owner, name, user)
	if err != nil && !errors.Is(err, github.ErrNotFound) {
		return retryOrCancel(err)
	}
	if !containsFold(canCommand, perm) {
		w.log.InfoContext(ctx, "command refused", "delivery", a.Delivery, "repo", owner+"/"+name, "user", user, "permission", perm)
		return reply(fmt.Sprintf("`/testfirst %s` needs write access to %s/%s.", cmd, owner, name))
	}
	isPull := len(p.Issue.PullRequest) > 0 && string(p.Issue.PullRequest) != "null"
	var (
		repo    db.Repository
		tk      db.Ticket
		tkErr   error
		pr      db.PullRequest
		prErr   error
		tickets []db.Ticket
		grades  []db.Grade
	)
	if err := w.db.Tx(ctx, func(tx *db.Tx) error {
		var err error
		if repo, err = p.record(ctx, tx); err != nil {
			return err
		}
		if !isPull {
			tk, tkErr = tx.TicketByIssue(ctx, repo.ID, number)
			return nil
		}
		if pr, prErr = tx.PullRequest(ctx, repo.ID, number); prErr != nil {
			return nil
		}
		for _, issue := range pr.Links {
			t, err := tx.TicketByIssue(ctx, repo.ID, issue)
			if errors.Is(err, db.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			tickets = append(tickets, t)
		}
		grades, err = tx.GradesOfHead(ctx, pr.HeadSHA)
		return err
	}); err != nil {
		return err
	}
	if err := w.db.Tx(ctx, func(tx *db.Tx) error {
		return audit(ctx, tx, user, tk.ID, "command."+cmd, map[string]any{"delivery": a.Delivery, "issue": number})
	}); err != nil {
		return err
	}
	switch {
	case !isPull && tkErr != nil:
		return reply(fmt.Sprintf("#%d is not a testfirst ticket: label it `test-first` to open one.", number))
	case isPull && (prErr != nil || len(tickets) == 0):
		return reply(fmt.Sprintf("This pull request closes no testfirst ticket: say `Fixes #<issue>` in its description to link one."))
	case cmd == commandStatus && !isPull:
		return reply(w.ticketStatus(ctx, repo, tk))
	case cmd == commandStatus:
		return reply(pullStatus(pr, tickets, grades))
	case !isPull:
		if w.grades.store == nil {
			return nil
		}
		st := store.Ticket{Installation: repo.InstallationID, Owner: owner, Repo: name, Issue: tk.IssueNumber}
		v, err := approvedVersion(ctx, w.grades.store, st)
		if err != nil {
			return err
		}
		if v == nil {
			return reply(fmt.Sprintf("#%d has no approved hidden tests yet: nothing to grade against.", number))
		}
		n, err := w.grades.gradeOpenPulls(ctx, gi, repo, tk, *v, true)
		if err != nil {
			return err
		}
		return reply(fmt.Sprintf("Grading %d open pull request(s) again against hidden tests v%d.", n, v.Number))
	default:
		if w.grades.store == nil {
			return nil
		}
		for _, t := range tickets {
			if err := w.grades.gradeTicket(ctx, gi, repo, t, pr.Number, pr.HeadSHA, true); err != nil {
				return err
			}
		}
		return reply(fmt.Sprintf("Grading `%.12s` again.", pr.HeadSHA))
	}
}

// ticketStatus says where a ticket stands, in states and counts only.
func (w *DeliveryWorker) ticketStatus(ctx context.Context, repo db.Repository, tk db.Ticket) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**testfirst** #%d: %s", tk.IssueNumber, strings.ReplaceAll(tk.State, "_", " "))
	if !tk.ClosedAt.IsZero() {
		b.WriteString(" (issue closed)")
	}
	if !tk.WithdrawnAt.IsZero() {
		fmt.Fprintf(&b, " (label `%s` removed)", tk.Label)
	}
	fmt.Fprintf(&b, "\n\n- base commit: `%.12s`\n", tk.BaseSHA)
	var (
		vs  []db.Version
		prs []db.PullRequest
	)
	_ = w.db.Tx(ctx, func(tx *db.Tx) error {
		var err error
		if vs, err = tx.Versions(ctx, tk.ID); err != nil {
			return err
		}
		prs, err = tx.OpenPullsClosing(ctx, repo.ID, tk.IssueNumber)
		return err
	})
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
		fmt.Fprintf(&b, " #%d (%s)", tk.IssueNumber, strings.ReplaceAll(tk.State, "_", " "))
	}
	b.WriteString("\n\n")
	if len(grades) == 0 {
		b.WriteString("- no grade of this head yet\n")
	}
	for _, g := range grades {
		if g.State == db.GradeCompleted {
			fmt.Fprintf(&b, "- hidden tests v%d: %s, %d/%d passed, trust %s\n", g.VersionNumber, g.Verdict, g.Passed, g.Total, g.Trust)
		} else {
			fmt.Fprintf(&b, "- hidden tests v%d: %s\n", g.VersionNumber, g.State)
		}
	}
	return b.String()
}

func containsFold(list []string, s string) bool {
	for _, l := range list {
		if strings.EqualFold(l, s) {
			return true
		}
	}
	return false
}
