package jobs

import (
	"strings"
	"testing"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/testfirst-app/testfirst/db"
)

// TestPullCommandIsAuditedOnItsTickets gives /testfirst status on a pull
// request that closes the fixture's ticket: the command is answered and
// recorded in that ticket's audit log, not in an audit row of no ticket.
func TestPullCommandIsAuditedOnItsTickets(t *testing.T) {
	f := newSyncFixture(t)
	ctx := t.Context()
	f.gh.SetPermission("octo-org", "app", "maria", "write")
	w := &DeliveryWorker{db: f.d, github: f.sync.github, grades: f.sync.grades, log: f.sync.log}
	work := func(a DeliveryArgs) {
		t.Helper()
		job := &river.Job[DeliveryArgs]{JobRow: &rivertype.JobRow{ID: 1, Attempt: 1, MaxAttempts: 25, Kind: a.Kind()}, Args: a}
		if err := w.Work(ctx, job); err != nil {
			t.Fatalf("%s.%s: %v", a.Event, a.Action, err)
		}
	}
	head := f.gh.Commit("octo-org", "app", "pr", map[string]string{"README.md": "change\n"})
	f.gh.AddPull("octo-org", "app", 8, head, "main", "Fixes #7", "")
	work(fixtureDelivery(t, "pull_request", "opened.payload.json", map[string]any{"number": 8, "pull_request.number": 8,
		"pull_request.body": "Fixes #7", "pull_request.head.sha": head, "pull_request.state": "open"}))
	work(fixtureDelivery(t, "issue_comment", "created.payload.json", map[string]any{"comment.body": "/testfirst status",
		"comment.user.login": "maria", "comment.user.type": "User", "issue.number": 8,
		"issue.pull_request": map[string]any{"url": "https://api.github.com/repos/octo-org/app/pulls/8"}}))
	var reply string
	for _, c := range f.gh.Comments("octo-org", "app", 8) {
		reply = c.Body
	}
	if !strings.Contains(reply, "**testfirst** #8") || !strings.Contains(reply, "#7 (writing)") {
		t.Errorf("reply %q; want the pull request's status naming ticket #7", reply)
	}
	assertAudit(t, f, "command.status")
}

// TestNotGradingRecordsAndGradesNothing: a service built without the
// store or the sandbox records a pull request that closes an approved
// ticket, grades nothing, and says why: on the pull request's check run
// (action required, naming what is missing) and in the reply to
// /testfirst regrade.
func TestNotGradingRecordsAndGradesNothing(t *testing.T) {
	f := newSyncFixture(t)
	ctx := t.Context()
	f.gh.SetPermission("octo-org", "app", "maria", "write")
	w := &DeliveryWorker{db: f.d, github: f.sync.github, grades: notGrading{f.sync.grades, "no store"}, log: f.sync.log}
	work := func(a DeliveryArgs) {
		t.Helper()
		job := &river.Job[DeliveryArgs]{JobRow: &rivertype.JobRow{ID: 1, Attempt: 1, MaxAttempts: 25, Kind: a.Kind()}, Args: a}
		if err := w.Work(ctx, job); err != nil {
			t.Fatalf("%s.%s: %v", a.Event, a.Action, err)
		}
	}
	v := f.push(t)
	if _, err := f.w.Approve(ctx, f.st, v.Number, v.Digest, "alice"); err != nil {
		t.Fatal(err)
	}
	head := f.gh.Commit("octo-org", "app", "pr", map[string]string{"README.md": "change\n"})
	f.gh.AddPull("octo-org", "app", 8, head, "main", "Fixes #7", "")
	work(fixtureDelivery(t, "pull_request", "opened.payload.json", map[string]any{"number": 8, "pull_request.number": 8,
		"pull_request.body": "Fixes #7", "pull_request.head.sha": head, "pull_request.state": "open"}))
	work(fixtureDelivery(t, "issue_comment", "created.payload.json", map[string]any{"comment.body": "/testfirst regrade",
		"comment.user.login": "maria", "comment.user.type": "User", "issue.number": 7, "issue.pull_request": nil}))
	runs := f.gh.CheckRuns("octo-org", "app")
	if len(runs) != 1 || runs[0].Status != "completed" || runs[0].Conclusion != "action_required" ||
		!strings.Contains(runs[0].Summary, "grading is not configured on this installation: `no store`") {
		t.Errorf("check runs %+v; want one, action required, saying grading is not configured and why", runs)
	}
	// A redelivery updates that run; it does not add one.
	work(fixtureDelivery(t, "pull_request", "opened.payload.json", map[string]any{"number": 8, "pull_request.number": 8,
		"pull_request.body": "Fixes #7", "pull_request.head.sha": head, "pull_request.state": "open"}))
	if runs := f.gh.CheckRuns("octo-org", "app"); len(runs) != 1 {
		t.Errorf("after a redelivery: %d check runs, want 1", len(runs))
	}
	if cs := f.gh.Comments("octo-org", "app", 7); len(cs) != 1 || !strings.Contains(cs[0].Body, "Nothing was graded: grading is not configured on this installation: no store") {
		t.Errorf("comments %+v; want a reply saying nothing was graded, and why", cs)
	}
	var prs int
	if err := f.d.Tx(ctx, func(tx *db.Tx) error {
		open, err := tx.OpenPullsClosing(ctx, 30, 7)
		prs = len(open)
		return err
	}); err != nil || prs != 1 {
		t.Errorf("open pull requests closing #7: %d, %v; want the one recorded", prs, err)
	}
}
