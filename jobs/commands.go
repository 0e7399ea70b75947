package jobs

import (
	"cmp"
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
		Body    string `json:"body"`
		HTMLURL string `json:"html_url"`
		User    struct {
			Login string `json:"login"`
			Type  string `json:"type"`
		} `json:"user"`
	} `json:"comment"`
	Issue struct {
		Number      int             `json:"number"`
		PullRequest json.RawMessage `json:"pull_request"`
		Labels      []struct {
			Name string `json:"name"`
		} `json:"labels"`
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
	// prGrades are the grades of each open pull request's head, by number.
	prGrades map[int][]db.Grade
	// On a pull request: the pull request (found says whether it is
	// recorded), the tickets it closes, the number of each one's newest
	// version (by ticket id) and the grades of its head.
	pr      db.PullRequest
	tickets []db.Ticket
	newest  map[int64]int
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
	kind := "issue"
	if len(p.Issue.PullRequest) > 0 && string(p.Issue.PullRequest) != "null" {
		kind = "pull request"
	}
	if err := w.scanPasted(ctx, p.repoPayload, p.Comment.Body, pastedPlace{SeenIn: fmt.Sprintf("a comment on %s #%d", kind, p.Issue.Number),
		URL: p.Comment.HTMLURL, Author: p.Comment.User.Login}); err != nil {
		return err
	}
	if a.Action != "created" {
		return nil // an edited comment is read for pasted tests only; its command ran when it was made
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
	if !pipeline.MayCommand(cmd, perm) {
		w.log.InfoContext(ctx, "command refused", "delivery", a.Delivery, "repo", owner+"/"+name, "user", user, "permission", perm)
		return reply(pipeline.CommandRefusedReply(cmd, owner, name))
	}
	isPull := len(p.Issue.PullRequest) > 0 && string(p.Issue.PullRequest) != "null"
	// Only someone with write access opens a ticket by a command.
	if !isPull && pipeline.HasWriteAccess(perm) {
		if err := w.retakeOnCommand(ctx, a, p); err != nil {
			return err
		}
	}
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
	case !isPull && !t.found && len(p.Issue.Labels) > 0 && !pipeline.HasWriteAccess(perm):
		// Labelled but no ticket (a broken config, say): only someone with
		// write access takes it up, by this command or an edit.
		return reply(fmt.Sprintf("#%d is not a testfirst ticket yet. Once its repository's configuration is right, someone with write access to %s/%s "+
			"opens it by commenting `/testfirst status` here or editing the issue.", number, owner, name))
	case !isPull && !t.found:
		return reply(fmt.Sprintf("#%d is not a testfirst ticket: label it `test-first` to open one.", number))
	case isPull && len(t.tickets) == 0:
		return reply("This pull request closes no testfirst ticket: say `Fixes #<issue>` in its description to link one.")
	case cmd == pipeline.CommandStatus && !isPull:
		return reply(ticketStatus(w.links(t.repo), t.tk, t.vs, t.prs, t.prGrades))
	case cmd == pipeline.CommandStatus:
		return reply(pullStatus(w.links(t.repo), t.pr, t.tickets, t.newest, t.grades))
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
		if t.prs, err = tx.OpenPullsClosing(ctx, t.repo.ID, t.tk.IssueNumber); err != nil {
			return t, err
		}
		t.prGrades = map[int][]db.Grade{}
		for _, pr := range t.prs {
			gs, err := tx.GradesOfHead(ctx, pr.HeadSHA)
			if err != nil {
				return t, err
			}
			t.prGrades[pr.Number] = gs
		}
		return t, nil
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
		vs, err := tx.Versions(ctx, tk.ID)
		if err != nil {
			return t, err
		}
		if t.newest == nil {
			t.newest = map[int64]int{}
		}
		t.newest[tk.ID] = newestNumber(vs)
	}
	t.grades, err = tx.GradesOfHead(ctx, t.pr.HeadSHA)
	return t, err
}

// statusLinks makes the links of a status reply.
type statusLinks struct {
	base        string // the service's public URL, without a trailing slash
	owner, repo string
}

func (w *DeliveryWorker) links(repo db.Repository) statusLinks {
	return statusLinks{base: strings.TrimSuffix(w.publicURL, "/"), owner: repo.Owner, repo: repo.Name}
}

func (l statusLinks) grade(id int64) string { return l.base + pipeline.GradePath(id) }

// card is the approval card of the ticket's newest version, or its page.
func (l statusLinks) card(issue int, vs []db.Version) string {
	if len(vs) == 0 {
		return l.base + pipeline.TicketPath(l.owner, l.repo, issue)
	}
	return l.base + pipeline.CardPath(l.owner, l.repo, issue, vs[len(vs)-1].Number)
}

// gradeLine says how one grade stands, with its page; newest is the
// number of the ticket's newest version: a grade against an older one is
// said to be of replaced tests, never as the head's standing.
func (l statusLinks) gradeLine(g db.Grade, newest int) string {
	var line string
	if g.State == pipeline.GradeCompleted {
		line = fmt.Sprintf("hidden tests v%d: %s, %d/%d passed, trust %s ([grade](%s))", g.VersionNumber, g.Verdict, g.Passed, g.Total, g.Trust, l.grade(g.ID))
	} else {
		line = fmt.Sprintf("hidden tests v%d: %s ([grade](%s))", g.VersionNumber, g.State, l.grade(g.ID))
	}
	if g.VersionNumber < newest {
		line = fmt.Sprintf("replaced by v%d; was %s", newest, line)
	}
	return line
}

// newestNumber is the number of the newest of vs, 0 when there is none.
func newestNumber(vs []db.Version) int {
	if len(vs) == 0 {
		return 0
	}
	return vs[len(vs)-1].Number
}

// waitingLine says why a ticket's pull requests are not graded.
func waitingLine(vs []db.Version) string {
	if len(vs) == 0 {
		return pipeline.WaitingFor(nil)
	}
	v := vs[len(vs)-1]
	check, _ := pipeline.ParseCheck(v.Check)
	return pipeline.WaitingFor(&pipeline.VersionStatus{Number: v.Number, State: v.State, Check: check, Announced: v.Announced})
}

// ticketStatus says where a ticket stands, in states and counts only:
// each version, each open pull request with its verdict and grade page,
// and the approval card.
func ticketStatus(l statusLinks, tk db.Ticket, vs []db.Version, prs []db.PullRequest, grades map[int][]db.Grade) string {
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
	fmt.Fprintf(&b, "- approval card: %s\n", l.card(tk.IssueNumber, vs))
	if len(prs) > 0 {
		b.WriteString("\nOpen pull requests:\n\n")
	}
	for _, pr := range prs {
		var last *db.Grade
		for _, g := range grades[pr.Number] {
			if g.TicketID == tk.ID {
				last = &g
			}
		}
		switch {
		case last != nil && last.VersionNumber < newestNumber(vs):
			fmt.Fprintf(&b, "- #%d at `%.12s`: not graded against v%d: %s; its grade against v%d, which v%d replaces, was %s ([grade](%s))\n",
				pr.Number, pr.HeadSHA, newestNumber(vs), waitingLine(vs), last.VersionNumber, newestNumber(vs), cmp.Or(string(last.Verdict), string(last.State)), l.grade(last.ID))
		case last != nil:
			fmt.Fprintf(&b, "- #%d at `%.12s`: %s\n", pr.Number, pr.HeadSHA, l.gradeLine(*last, newestNumber(vs)))
		default:
			fmt.Fprintf(&b, "- #%d at `%.12s`: not graded: %s\n", pr.Number, pr.HeadSHA, waitingLine(vs))
		}
	}
	return b.String()
}

// pullStatus says how a pull request's head was graded, ticket by
// ticket, with each grade's page and each ticket's card.
func pullStatus(l statusLinks, pr db.PullRequest, tickets []db.Ticket, newest map[int64]int, grades []db.Grade) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**testfirst** #%d at `%.12s` closes", pr.Number, pr.HeadSHA)
	for _, tk := range tickets {
		fmt.Fprintf(&b, " #%d (%s)", tk.IssueNumber, strings.ReplaceAll(string(tk.State), "_", " "))
	}
	b.WriteString("\n\n")
	for _, tk := range tickets {
		n := 0
		for _, g := range grades {
			if g.TicketID == tk.ID {
				fmt.Fprintf(&b, "- #%d: %s\n", tk.IssueNumber, l.gradeLine(g, newest[tk.ID]))
				n++
			}
		}
		if n == 0 {
			fmt.Fprintf(&b, "- #%d: no grade of this head yet\n", tk.IssueNumber)
		}
		fmt.Fprintf(&b, "- #%d's ticket: %s\n", tk.IssueNumber, l.base+pipeline.TicketPath(l.owner, l.repo, tk.IssueNumber))
	}
	return b.String()
}

// retakeOnCommand takes up a labelled issue that is not a ticket on a
// command of someone with write access, as on an edit (retake): the
// config error comment tells the requester to comment /testfirst status
// once the config is fixed. Other comments read nothing: a busy
// repository's every comment would cost a read of its config.
func (w *DeliveryWorker) retakeOnCommand(ctx context.Context, a DeliveryArgs, p commentPayload) error {
	var ip issuePayload
	if err := json.Unmarshal(a.Payload, &ip); err != nil {
		return river.JobCancel(fmt.Errorf("delivery %s: payload: %w", a.Delivery, err))
	}
	if len(ip.Issue.Labels) == 0 {
		return nil
	}
	// The comment's author is the one who acts, as an edit's sender is.
	ip.Sender.Login = p.Comment.User.Login
	_, _, err := w.issueTicket(ctx, p.repoPayload, p.Issue.Number)
	if !errors.Is(err, db.ErrNotFound) {
		return err // a ticket already, or the database failed
	}
	return w.retake(ctx, a, ip, byCommand)
}
